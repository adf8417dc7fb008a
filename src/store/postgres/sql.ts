/**
 * The PostgreSQL repositories' way to run statements on the bridge: SQL written with `?`
 * placeholders, as the SQLite repositories write it, numbered `$1, $2…` here (hob's SQL has
 * no `?` of its own). `get`, `all` and `run` read as better-sqlite3's do.
 */
import type { PostgresBridge, SqlValue } from './bridge.js';

const numbered = new Map<string, string>();

function toPostgres(sql: string): string {
  let text = numbered.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    numbered.set(sql, text);
  }
  return text;
}

export class Sql {
  constructor(readonly bridge: PostgresBridge) {}

  all<Row>(sql: string, ...params: SqlValue[]): Row[] {
    return this.bridge.query<Row>(toPostgres(sql), params).rows;
  }

  get<Row>(sql: string, ...params: SqlValue[]): Row | undefined {
    return this.all<Row>(sql, ...params)[0];
  }

  /** Runs a statement; returns the rows it changed. */
  run(sql: string, ...params: SqlValue[]): number {
    return this.bridge.query(toPostgres(sql), params).rowCount;
  }

  transaction<T>(fn: () => T): T {
    return this.bridge.transaction(fn);
  }
}
