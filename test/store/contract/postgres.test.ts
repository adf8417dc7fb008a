/** The store contract suite on the PostgreSQL store, on the run's throwaway cluster. */
import { afterAll, describe, it } from 'vitest';
import { PostgresBridge } from '../../../src/store/postgres/bridge.js';
import { migratePostgres } from '../../../src/store/postgres/migrate.js';
import { PostgresStore } from '../../../src/store/postgres/store.js';
import { postgresSkipReason, testDatabase } from '../../support/postgres.js';
import { conversationsContract } from './conversations.js';
import { deliveryContract } from './delivery.js';
import type { StoreFactory } from './harness.js';
import { peopleContract } from './people.js';
import { schedulesContract } from './schedules.js';
import { tasksContract } from './tasks.js';

/**
 * One database and one connection for the file, migrated once (a database, a bridge's worker
 * and its connection cost about a second each to set up); each test gets a new store on it,
 * with its own clock, over emptied tables. Closing that store flushes what it holds back; the
 * connection stays for the next test and is closed after the file.
 */
class StoreOnTheFileConnection extends PostgresStore {
  override close(): void {
    this.memory.flushUses();
  }
}

let connection: Promise<PostgresBridge> | undefined;
afterAll(async () => (await connection)?.close());

const postgres: StoreFactory = {
  kind: 'postgres',
  open: async (clock) => {
    connection ??= testDatabase().then(({ url }) => {
      const bridge = new PostgresBridge({ url });
      migratePostgres(bridge);
      return bridge;
    });
    const bridge = await connection;
    const tables = bridge.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'hob_schema'").rows;
    bridge.exec(`TRUNCATE ${tables.map((table) => table.name).join(', ')} RESTART IDENTITY CASCADE`);
    return new StoreOnTheFileConnection(bridge, { clock });
  },
};

if (postgresSkipReason) {
  describe.skip(`store contract on PostgreSQL: ${postgresSkipReason}`, () => it('skipped', () => undefined));
} else {
  conversationsContract(postgres);
  deliveryContract(postgres);
  schedulesContract(postgres);
  peopleContract(postgres);
  tasksContract(postgres);
}
