/**
 * One scheduler runner in its own process, for the two-processes test: a simulated clock
 * (`speed` × real time from a start time the parent sends, beginning at `base`) shared with
 * its twin, ticking about every millisecond until `endAt` (and once at it). Prints how many runs it claimed.
 */
import { createLogger } from '../../src/logger.js';
import { Scheduler } from '../../src/scheduler/runner.js';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { SqliteJobs } from '../../src/store/sqlite/jobs.js';
import { SqliteOutbox } from '../../src/store/sqlite/outbox.js';

const [dbPath, base, speed, endAt] = process.argv.slice(2) as [string, string, string, string];
// Ready: the parent answers with the shared start time once both runners are loaded.
process.stdout.write('ready\n');
const startWall = await new Promise<string>((resolve) => process.stdin.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
const db = openDatabase(dbPath);
const clock = { now: () => Math.min(Number(endAt), Number(base) + Math.max(0, Date.now() - Number(startWall)) * Number(speed)) };
const scheduler = new Scheduler({
  jobs: new SqliteJobs(db),
  transaction: (fn) => db.transaction(fn).immediate(),
  outbox: new SqliteOutbox(db),
  kick: () => undefined,
  clock,
  logger: createLogger({ level: 'silent', destination: 'silent' }),
  // A long grace: a runner slowed by a busy machine must not skip runs (this test is about once).
  settings: { graceMinutes: 1000, maxFailures: 3, reportTimeoutSeconds: 60 },
  timezoneFor: () => 'UTC',
});
while (Date.now() < Number(startWall)) await new Promise((resolve) => setTimeout(resolve, 5));
// A pass about every millisecond of real time (200 ms of the simulated clock at 200x): each due
// moment is still raced by both runners, whose next passes land anywhere in that millisecond,
// and an idle pass (nothing due) costs a fraction of it, where passing flat out (setImmediate)
// kept a core busy per runner for the whole race.
while (clock.now() < Number(endAt)) {
  await scheduler.tick();
  await new Promise((resolve) => setTimeout(resolve, 1));
}
// One more pass at the end time: a runner held off the CPU across the last due moment (a
// loaded machine) would otherwise stop with that run unclaimed, and the test count it lost.
await scheduler.tick();
const claimed = db.prepare('SELECT COUNT(*) n FROM job_runs WHERE runner = ?').get(scheduler.runnerId) as { n: number };
process.stdout.write(`${JSON.stringify({ claimed: claimed.n })}\n`);
db.close();
process.stdin.destroy();
