/** The store contract suite on the PostgreSQL store: a fresh database per test on the run's throwaway cluster. */
import { describe, it } from 'vitest';
import { openPostgresStore } from '../../../src/store/postgres/store.js';
import { postgresSkipReason, testDatabase } from '../../support/postgres.js';
import { conversationsContract } from './conversations.js';
import { deliveryContract } from './delivery.js';
import type { StoreFactory } from './harness.js';
import { peopleContract } from './people.js';
import { schedulesContract } from './schedules.js';
import { tasksContract } from './tasks.js';

let database: Promise<string> | undefined;

/** One database for the file (creating and migrating one costs seconds); each test starts from empty tables. */
const postgres: StoreFactory = {
  kind: 'postgres',
  open: async (clock) => {
    database ??= testDatabase().then(({ url }) => url);
    const store = openPostgresStore(await database, { clock });
    const tables = store.bridge.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'hob_schema'").rows;
    store.bridge.exec(`TRUNCATE ${tables.map((table) => table.name).join(', ')} RESTART IDENTITY CASCADE`);
    return store;
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
