/**
 * `hob store migrate --to postgres`: copies a SQLite data dir's database into PostgreSQL,
 * every table with its ids as they are, in one PostgreSQL transaction (all or nothing), then
 * checks each table's row count against the source. Search text needs no copy of its index:
 * PostgreSQL computes it from the rows (generated tsvector columns); vectors are copied from
 * sqlite-vec's tables into memory_vectors.
 *
 * Every SQLite table must be accounted for here (copied, or known to be derived): a table
 * this file does not know (a newer hob's) stops the copy instead of being left behind.
 */
import { UserFacingError } from '../core/errors.js';
import type { PostgresBridge, SqlValue } from './postgres/bridge.js';
import { describeTarget } from './postgres/errors.js';
import { migratePostgres } from './postgres/migrate.js';
import { putVector } from './postgres/memory-search.js';
import type { Db } from './sqlite/db.js';
import { indexWaitingMessages } from './sqlite/message-index.js';
import { SqliteVectors } from './sqlite/vectors.js';

/** One PostgreSQL table and where its rows come from in SQLite (default: the table of the same name). */
type TableCopy = { table: string; label: string; from?: string };

/** In dependency order (a row's references are copied before it). */
const TABLES: readonly TableCopy[] = [
  // seq: the insertion order SQLite's rowid gave (PostgreSQL keeps it as a column).
  { table: 'sessions', label: 'sessions', from: 'SELECT rowid AS seq, * FROM sessions' },
  { table: 'messages', label: 'messages' },
  { table: 'message_search', label: 'messages (search text)', from: 'SELECT rowid AS message_id, person_id, session_id, role, text FROM messages_fts' },
  { table: 'compactions', label: 'compactions' },
  { table: 'usage', label: 'usage' },
  { table: 'token_calibration', label: 'token calibration' },
  { table: 'permission_rules', label: 'permission rules' },
  { table: 'approvals', label: 'approvals' },
  { table: 'outbox', label: 'outbox' },
  { table: 'pairings', label: 'pairing' },
  { table: 'inbox', label: 'inbox' },
  { table: 'person_links', label: 'people (links)' },
  { table: 'link_codes', label: 'link codes' },
  { table: 'link_failures', label: 'link failures' },
  { table: 'memory_entries', label: 'memory entries' },
  { table: 'profiles', label: 'profiles' },
  { table: 'jobs', label: 'jobs' },
  { table: 'job_runs', label: 'job runs' },
  { table: 'tasks', label: 'background tasks' },
];

/** SQLite tables whose content PostgreSQL derives or keeps otherwise: full-text indexes (and the rows waiting for one), counters, vectors (copied apart). */
const DERIVED = /^(memory_fts|messages_fts)(_\w+)?$|^sqlite_|^memory_vec(bit|f)?_\d+(_\w+)?$/;

export type TableCount = { label: string; table: string; source: number; copied: number };
export type CopyReport = { target: string; tables: TableCount[]; vectors: { source: number; copied: number } };

/** Rows per INSERT: well under PostgreSQL's parameter and statement-time limits. */
const BATCH = 500;

/**
 * Copies `db` into the database behind `bridge` (its schema brought up to date first). A target
 * already holding hob data is refused unless `replace`, which empties it in the same transaction.
 */
export function copyToPostgres(db: Db, bridge: PostgresBridge, options: { replace: boolean }): CopyReport {
  const target = describeTarget(bridge.target);
  const unknown = sqliteTables(db).filter((name) => !DERIVED.test(name) && !TABLES.some((copy) => copy.table === name));
  if (unknown.length) throw new UserFacingError(`The SQLite database has table${unknown.length === 1 ? '' : 's'} this hob cannot copy (${unknown.join(', ')}): it was written by a newer hob. Upgrade hob, then run hob store migrate again.`);
  migratePostgres(bridge);
  // Search rows still waiting for the index (message-index.ts) are copied from it with the rest.
  indexWaitingMessages(db);
  // One read transaction on SQLite: every table is read from the same moment.
  return db.transaction(() => bridge.transaction(() => {
    const held = TABLES.filter((copy) => bridge.query(`SELECT 1 FROM ${copy.table} LIMIT 1`).rowCount > 0);
    if (held.length && !options.replace) {
      throw new UserFacingError(
        `PostgreSQL at ${target} already holds hob data (${held.map((copy) => copy.label).join(', ')}). Nothing was copied. To replace it with this data dir's copy, run the command again with --force: everything hob keeps in that database is deleted first.`,
      );
    }
    if (held.length) bridge.exec(`TRUNCATE ${TABLES.map((copy) => copy.table).join(', ')}, memory_vectors RESTART IDENTITY CASCADE`);
    const tables = TABLES.map((copy) => copyTable(db, bridge, copy));
    const vectors = copyVectors(db, bridge);
    resetIdentities(bridge);
    const wrong = tables.filter((count) => count.copied !== count.source);
    if (wrong.length || vectors.copied !== vectors.source) {
      const what = [...wrong.map((count) => `${count.label}: ${count.source} in SQLite, ${count.copied} in PostgreSQL`), ...(vectors.copied !== vectors.source ? [`memory vectors: ${vectors.source} in SQLite, ${vectors.copied} in PostgreSQL`] : [])];
      throw new UserFacingError(`The copy did not match the source (${what.join('; ')}), so nothing was kept in PostgreSQL. Is hob still running on this data dir? Stop it and run the command again.`);
    }
    return { target, tables, vectors };
  }))();
}

function sqliteTables(db: Db): string[] {
  return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name);
}

/** The target's columns that take values (not generated), with their types as `jsonb_to_recordset` needs them. */
function targetColumns(bridge: PostgresBridge, table: string): { name: string; type: string }[] {
  return bridge.query<{ name: string; type: string }>(
    `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
     WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
    [table],
  ).rows;
}

function copyTable(db: Db, bridge: PostgresBridge, copy: TableCopy): TableCount {
  const rows = db.prepare(copy.from ?? `SELECT * FROM ${copy.table}`).all() as Record<string, unknown>[];
  const available = new Set(rows.length ? Object.keys(rows[0] as object) : []);
  const columns = targetColumns(bridge, copy.table).filter((column) => available.has(column.name));
  const list = columns.map((column) => `"${column.name}"`).join(', ');
  const shape = columns.map((column) => `"${column.name}" ${column.type}`).join(', ');
  for (let start = 0; start < rows.length; start += BATCH) {
    const batch = rows.slice(start, start + BATCH).map((row) => Object.fromEntries(columns.map((column) => [column.name, toPostgres(row[column.name], column.type)])));
    // One parameter per batch: the rows as JSON, typed by the target's own columns.
    bridge.query(`INSERT INTO ${copy.table} (${list}) SELECT ${list} FROM jsonb_to_recordset($1::jsonb) AS r(${shape})`, [JSON.stringify(batch)]);
  }
  return { label: copy.label, table: copy.table, source: rows.length, copied: count(bridge, copy.table) };
}

/** SQLite keeps flags as 0/1 and tags as JSON text; PostgreSQL as booleans and arrays. */
function toPostgres(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return null;
  if (type === 'boolean') return value === 1 || value === true;
  if (type.endsWith('[]') && typeof value === 'string') return JSON.parse(value) as unknown;
  if (typeof value === 'bigint') return Number(value);
  return value;
}

/** Each memory vector as its floats, with its person (from its entry), into memory_vectors. */
function copyVectors(db: Db, bridge: PostgresBridge): { source: number; copied: number } {
  let source = 0;
  for (const name of sqliteTables(db)) {
    const floats = /^memory_vecf_(\d+)$/.exec(name);
    const plain = /^memory_vec_(\d+)$/.exec(name);
    if (!floats && !plain) continue;
    // A vec0 table (dimensions not a multiple of 8) reads only with sqlite-vec loaded.
    if (plain && 'error' in SqliteVectors.open(db)) throw new UserFacingError(`The memory vectors in ${name} need sqlite-vec to be read, and it could not be loaded here. Run hob store migrate where hob start runs.`);
    const rows = db
      .prepare(floats ? `SELECT v.seq AS seq, e.person_id AS person, v.embedding AS embedding FROM ${name} v JOIN memory_entries e ON e.seq = v.seq` : `SELECT rowid AS seq, person, embedding FROM ${name}`)
      .all() as { seq: number | bigint; person: string; embedding: Uint8Array }[];
    for (const row of rows) putVector(bridge, Number(row.seq), row.person, new Float32Array(row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.byteLength)));
    source += rows.length;
  }
  return { source, copied: count(bridge, 'memory_vectors') };
}

/** Ids were copied as they are: each identity continues after the highest one. */
function resetIdentities(bridge: PostgresBridge): void {
  const identities = bridge.query<{ table: string; column: string }>(
    `SELECT c.relname AS table, a.attname AS column FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE a.attidentity <> '' AND n.nspname = current_schema() AND c.relname = ANY($1::text[])`,
    [TABLES.map((copy) => copy.table)],
  ).rows;
  for (const { table, column } of identities) {
    bridge.query(`SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max("${column}") FROM ${table}), 1), (SELECT max("${column}") FROM ${table}) IS NOT NULL)`, [table, column] satisfies SqlValue[]);
  }
}

function count(bridge: PostgresBridge, table: string): number {
  return bridge.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`).rows[0]?.n ?? 0;
}
