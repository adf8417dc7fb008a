import { existsSync } from 'node:fs';
import type { HobConfig } from '../config/schema.js';
import { systemClock } from '../core/clock.js';
import { UserFacingError } from '../core/errors.js';
import { copyToPostgres } from '../store/copy-to-postgres.js';
import { DATABASE_URL_ENV, sqlitePath } from '../store/open.js';
import { PostgresBridge } from '../store/postgres/bridge.js';
import { openSqliteStore } from '../store/sqlite/store.js';

export type MigrateFlags = { to?: string; force?: boolean };

/**
 * `hob store migrate --to postgres [URL]`: copies the data dir's SQLite database into
 * PostgreSQL (URL, else HOB_DATABASE_URL), prints each table's rows, and says what to change
 * in the config. The SQLite file is left as it was. The password is never printed.
 */
export function runStoreMigrate(config: HobConfig, url: string | undefined, flags: MigrateFlags, configPath: string | undefined, out: NodeJS.WritableStream = process.stdout, env: NodeJS.ProcessEnv = process.env): void {
  if (flags.to !== 'postgres') throw new UserFacingError(`hob store migrate copies to PostgreSQL only: run hob store migrate --to postgres postgres://USER:PASSWORD@HOST:PORT/DATABASE${flags.to ? ` (not --to ${flags.to})` : ''}.`);
  const target = url ?? env[DATABASE_URL_ENV];
  if (!target) throw new UserFacingError(`Say where to copy to: hob store migrate --to postgres postgres://USER:PASSWORD@HOST:PORT/DATABASE, or set ${DATABASE_URL_ENV} (keeps the password out of your shell history).`);
  const source = sqlitePath(config.data_dir);
  if (!existsSync(source)) throw new UserFacingError(`There is no hob database at ${source} to copy (data_dir is ${config.data_dir}). Point --config at the config of the hob whose data you want to move.`);

  const sqlite = openSqliteStore(source, { clock: systemClock });
  const bridge = new PostgresBridge({ url: target, statementTimeoutMs: 120_000 });
  try {
    const report = copyToPostgres(sqlite.db, bridge, { replace: Boolean(flags.force) });
    const width = Math.max(...report.tables.map((table) => table.label.length), 'memory vectors'.length);
    out.write(`Copied ${source} to PostgreSQL at ${report.target}:\n`);
    const line = (label: string, copied: number, source: number) => out.write(`  ${label.padEnd(width)}  ${String(copied).padStart(8)} row${copied === 1 ? ' ' : 's'} (${source} in SQLite)\n`);
    for (const table of report.tables) line(table.label, table.copied, table.source);
    line('memory vectors', report.vectors.copied, report.vectors.source);
    out.write(`Every table matches its source, row for row. The SQLite file is unchanged: keep it as a backup.\n\n`);
    out.write(
      [
        `Now point hob at PostgreSQL. In ${configPath ?? 'your config.yaml'}:`,
        '',
        '  store:',
        '    kind: postgres',
        `    url: \${${DATABASE_URL_ENV}}`,
        '',
        `and set ${DATABASE_URL_ENV} to the URL you copied to in the environment hob start runs in. Then start hob again.`,
        '',
      ].join('\n'),
    );
  } finally {
    bridge.close();
    sqlite.close();
  }
}
