// Preloaded into `hob start` by `bench/profile.ts sql` (node --require): counts the SQLite
// statements better-sqlite3 runs, which of them write, and the commits (a write outside a
// transaction is one; a transaction is one), and the time spent in each (wall time inside the
// call: better-sqlite3 runs on the main thread, so it is what the event loop waits). On SIGUSR1 it writes the counts so far to
// <tmpdir>/hob-sql-count-<pid>.json. Measuring only: hob never loads it.
const Database = require(require.resolve('better-sqlite3', { paths: [process.cwd()] }));
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');

const counts = { statements: 0, writes: 0, commits: 0, ms: 0, bySql: {}, msBySql: {} };
const probe = new Database(':memory:');
const Statement = probe.prepare('SELECT 1').constructor;
probe.close();
const control = /^\s*(BEGIN|SAVEPOINT|RELEASE|ROLLBACK)/i;
for (const method of ['run', 'get', 'all', 'iterate']) {
  const original = Statement.prototype[method];
  Statement.prototype[method] = function (...args) {
    const sql = this.source.replace(/\s+/g, ' ').trim();
    const started = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      const ms = performance.now() - started;
      counts.ms += ms;
      counts.msBySql[sql] = (counts.msBySql[sql] || 0) + ms;
      count(this, sql);
    }
  };
}
// After the call: a write outside a transaction is still outside one then.
// BEGIN, COMMIT and the like get rows of their own too (not counted as statements): a
// transaction's commit is where its pages go to the WAL, so its time is worth seeing.
function count(statement, sql) {
  if (/^COMMIT/i.test(sql) || control.test(sql)) counts.bySql[sql] = (counts.bySql[sql] || 0) + 1;
  if (/^COMMIT/i.test(sql)) counts.commits++;
  else if (!control.test(sql)) {
    counts.statements++;
    counts.bySql[sql] = (counts.bySql[sql] || 0) + 1;
    if (!statement.reader) {
      counts.writes++;
      if (!statement.database.inTransaction) counts.commits++;
    }
  }
}
process.on('SIGUSR1', () => writeFileSync(join(tmpdir(), `hob-sql-count-${process.pid}.json`), JSON.stringify(counts)));
