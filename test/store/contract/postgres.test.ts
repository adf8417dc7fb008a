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

/**
 * What empties every table for the next test and starts its ids at 1 again, as TRUNCATE ...
 * RESTART IDENTITY would, without TRUNCATE's cost (new files for every table and index: about
 * 90 ms of the server's CPU a test, against 2 for deleting the few rows a test wrote). Rows
 * go from the tables that reference others first, so no foreign key stands in the way.
 */
function emptyAll(bridge: PostgresBridge): string {
  const tables = bridge.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'hob_schema'").rows.map((row) => row.name);
  const references = bridge.query<{ child: string; parent: string }>(
    "SELECT conrelid::regclass::text AS child, confrelid::regclass::text AS parent FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace AND conrelid <> confrelid",
  ).rows;
  const ordered: string[] = [];
  const visit = (table: string, path: string[]) => {
    if (ordered.includes(table)) return;
    if (path.includes(table)) throw new Error(`the tables ${path.join(' → ')} reference each other in a circle: empty them with TRUNCATE`);
    for (const reference of references) if (reference.parent === table) visit(reference.child, [...path, table]);
    ordered.push(table);
  };
  for (const table of tables) visit(table, []);
  const sequences = bridge.query<{ name: string }>("SELECT oid::regclass::text AS name FROM pg_class WHERE relkind = 'S' AND relnamespace = 'public'::regnamespace").rows;
  return [...ordered.map((table) => `DELETE FROM ${table}`), ...sequences.map((sequence) => `SELECT setval('${sequence.name}', 1, false)`)].join(';\n');
}

let connection: Promise<{ bridge: PostgresBridge; empty: string }> | undefined;
afterAll(async () => (await connection)?.bridge.close());

const postgres: StoreFactory = {
  kind: 'postgres',
  open: async (clock) => {
    connection ??= testDatabase().then(({ url }) => {
      const bridge = new PostgresBridge({ url });
      migratePostgres(bridge);
      return { bridge, empty: emptyAll(bridge) };
    });
    const { bridge, empty } = await connection;
    bridge.exec(empty);
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
