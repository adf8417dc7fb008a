import type pg from 'pg';

/**
 * A new pg connection (not yet connected). pg is loaded on the first one: the processes that
 * never make one (every SQLite store) do not load, parse and keep its ~110 KB of code.
 */
export async function newPgClient(config: pg.ClientConfig): Promise<pg.Client> {
  const { default: loaded } = await import('pg');
  return new loaded.Client(config);
}
