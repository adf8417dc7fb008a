/**
 * Where the store a config names lives: the SQLite file in data_dir (the default), or a
 * PostgreSQL URL. Apart from the openers (open.ts, open-lazily.ts), so what only asks where
 * does not load either store's code.
 */
import { join } from 'node:path';
import { UserFacingError } from '../core/errors.js';
import type { StoreKind } from './store.js';

/** The environment variable a PostgreSQL URL may come from instead of the config file. */
export const DATABASE_URL_ENV = 'HOB_DATABASE_URL';

/** What opening needs of the config: data_dir and the `store` section. */
export type StoreSettings = { dataDir: string; store?: { kind: StoreKind; url?: string | undefined } };

/** The SQLite store's file in a data dir. */
export function sqlitePath(dataDir: string): string {
  return join(dataDir, 'hob.db');
}

/** The PostgreSQL URL: `store.url`, else HOB_DATABASE_URL; an error that says how to set it when neither is. */
export function postgresUrl(settings: StoreSettings, env: NodeJS.ProcessEnv = process.env): string {
  const url = settings.store?.url ?? env[DATABASE_URL_ENV];
  if (!url) throw new UserFacingError(`store.kind is postgres but no URL is set: set store.url (e.g. \${${DATABASE_URL_ENV}}) or the ${DATABASE_URL_ENV} environment variable to postgres://USER:PASSWORD@HOST:PORT/DATABASE.`);
  return url;
}
