/** Bundled and run as its own process by migrations.test.ts: one hob process's start-up migration, with one migration more than released. */
import { PostgresBridge } from '../../../src/store/postgres/bridge.js';
import { migratePostgres } from '../../../src/store/postgres/migrate.js';
import { postgresMigrations } from '../../../src/store/postgres/migrations.js';

export const NEXT_MIGRATIONS = [...postgresMigrations, { name: 'a counter', sql: 'CREATE TABLE counter (n INTEGER); INSERT INTO counter VALUES (1);' }];

const url = process.argv[2];
if (url) {
  const bridge = new PostgresBridge({ url });
  try {
    migratePostgres(bridge, NEXT_MIGRATIONS);
  } finally {
    bridge.close();
  }
}
