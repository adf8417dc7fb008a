/**
 * What the SQLite store costs per answer: the writes `hob start` makes for one message and
 * its answer, on a real file — the inbound commit (inbox row, the session of a new person,
 * the person's message with its search row, the row done), the answer with its usage and
 * search row and its outbox row (one commit since the answer and its outbox row are written
 * together; two before), and the sent mark; the search rows go into the full-text index in
 * one transaction for every BURST answers (hob moves them a second after the first waits, so
 * a burst's go in together: src/store/sqlite/message-index.ts). Half the answers are to people
 * new to the store.
 * CPU (user + system, this process) and wall time (the checkpoints' syncs are waited for on
 * the thread that commits) per answer, median of the rounds, for hob's settings and, beside them, with
 * SQLite's default checkpoint interval (every 1,000 WAL pages: hob's is 4,000), with the
 * answer and its outbox row in two commits, and with each search row written into the index
 * in its message's commit (one FTS5 segment each, as before). Two more take the answers 20 at a
 * time as a burst of new people brings them (their messages in one commit, as the router stores
 * a turn's messages): each answer in a commit of its own, as before, and hob's, the burst's
 * answers in the commit at the end of the event loop's turn (src/store/sqlite/turn-commit.ts),
 * their sent marks after it. The variants take turns in rounds on files of their own, so a busy
 * minute on the machine hits all of them alike.
 * Last, bursts of 20 new people with a pause of PAUSE_MS after each, as people write with
 * pauses: each burst's wall time, on hob's store (the WAL copied back into the file at an idle
 * moment: src/store/sqlite/idle-checkpoint.ts) and on a store that leaves it to SQLite (inside
 * the commit that crosses 4,000 pages, which the burst then waits for). Median, slowest, and
 * the bursts that took over twice the median: the ones a checkpoint landed in.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message } from '../src/core/messages.js';
import { indexWaitingMessages } from '../src/store/sqlite/message-index.js';
import { openSqliteStore, type SqliteStore } from '../src/store/sqlite/store.js';
import { tempDir } from '../test/support/engine.js';
import { fmt, median, runIfMain, type BenchResult } from './stats.js';

const ROUNDS = 16;
const ANSWERS_PER_ROUND = 300;
const WARMUP = 300;
/** People who write again and again (the rest are new to the store). */
const REGULARS = 30;
/** Answers whose search rows go into the index together (vs-floor.ts's burst of new people). */
const BURST = 20;
/**
 * Bursts with a pause after each, per store, for the checkpoints' lines (~80 WAL pages each:
 * SQLite's own checkpoint comes every ~50), and the pause: core/when-idle.ts looks at 200 ms of
 * the event loop, idle when it worked under a tenth of them.
 */
const PAUSED_BURSTS = 150;
const PAUSE_MS = 60;

type Variant = { name: string; checkpointPages?: number; answerApart?: boolean; indexEachCommit?: boolean; burst?: 'apart' | 'turn' };

const VARIANTS: Variant[] = [
  { name: "hob's (4,000-page checkpoints, the answer and its outbox row in one commit)" },
  { name: 'checkpoints every 1,000 pages (SQLite default)', checkpointPages: 1000 },
  { name: 'the answer and its outbox row in two commits', answerApart: true },
  { name: 'both as before (1,000 pages, two commits)', checkpointPages: 1000, answerApart: true },
  { name: 'each search row into the index in its message\'s commit', indexEachCommit: true },
  { name: 'a burst of 20 new people, each answer in a commit of its own (as before)', burst: 'apart' },
  { name: "a burst of 20 new people, hob's: the answers in the turn's commit", burst: 'turn' },
];

const usage = { model: 'bench', usage: { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0 };

const said: Message = { role: 'user', content: [{ type: 'text', text: '[Wed 2 Dec 03:40] could you check the backup?' }] };
const answer: Message = { role: 'assistant', content: [{ type: 'text', text: 'It finished at 02:14 and took 6 minutes.' }] };
const chatOf = (person: number) => String(1000 + person);
const keyOf = (person: number) => `telegram:${chatOf(person)}`;

/** A person's message as the router stores it: the inbox row, the session (new for a new person), the message; returns the session. */
function storeMessage(store: SqliteStore, variant: Variant, person: number, now: number, update: number): string {
  const inboxId = store.inbox.add({ platform: 'telegram', updateId: String(update), sessionKey: keyOf(person), message: '{"text":"could you check the backup?"}', now });
  const session = store.conversations.activeSession(keyOf(person));
  store.conversations.appendMessage(session.id, said, { personId: `p${person}`, run: 'starts' });
  if (variant.indexEachCommit) indexWaitingMessages(store.db);
  if (inboxId !== undefined) store.inbox.markDone(inboxId);
  return session.id;
}

/** The answer as the engine stores it, with its usage and search row. */
function storeAnswer(store: SqliteStore, variant: Variant, sessionId: string, person: number): void {
  store.conversations.appendMessage(sessionId, answer, { personId: `p${person}`, run: 'ends', usage });
  if (variant.indexEachCommit) indexWaitingMessages(store.db);
}

/** The outbox row that carries the answer, leased for its send. */
function recordAnswer(store: SqliteStore, person: number, now: number): number {
  return store.outbox.add({ platform: 'telegram', chatId: chatOf(person), sessionKey: keyOf(person), message: '{"text":"It finished at 02:14 and took 6 minutes."}' as never, now, leaseUntil: now + 120_000 });
}

/** The send's end: the chat's earlier rows looked at, the sent mark. */
function sent(store: SqliteStore, row: number, person: number, now: number, update: number): void {
  store.outbox.blockedBy(row, 'telegram', chatOf(person), now);
  store.outbox.markSent(row, String(update), now);
}

/** One answer's writes, as the gateway and the engine make them. */
function answerOnce(store: SqliteStore, variant: Variant, person: number, now: number, update: number): void {
  const sessionId = store.transaction(() => storeMessage(store, variant, person, now, update));
  let row = 0;
  if (variant.answerApart) {
    storeAnswer(store, variant, sessionId, person);
    row = recordAnswer(store, person, now);
  } else {
    row = store.transaction(() => {
      storeAnswer(store, variant, sessionId, person);
      return recordAnswer(store, person, now);
    });
  }
  sent(store, row, person, now, update);
  if (update % BURST === 0) indexWaitingMessages(store.db);
}

/**
 * BURST new people's messages in one commit, then their answers (each with its outbox row) in
 * commits of their own or in the turn's, then the sent marks once the answers are committed.
 */
async function burstOnce(store: SqliteStore, variant: Variant, first: number, now: number, update: number): Promise<void> {
  const people = Array.from({ length: BURST }, (_, index) => first + index);
  const sessions = store.transaction(() => people.map((person) => storeMessage(store, variant, person, now, update + person)));
  const write = (at: number) => () => {
    storeAnswer(store, variant, sessions[at] as string, people[at] as number);
    return recordAnswer(store, people[at] as number, now);
  };
  const rows = people.map((_, at) => (variant.burst === 'turn' ? store.transactionInTurn(write(at)).value : store.transaction(write(at))));
  await new Promise((resolve) => setImmediate(resolve));
  for (const [at, person] of people.entries()) sent(store, rows[at] as number, person, now, update + person);
  indexWaitingMessages(store.db);
}

/** `count` answers of the variant: one at a time, or bursts of BURST new people. */
async function answers(store: SqliteStore, variant: Variant, count: number, next: { now: number; update: number; newcomer: number }): Promise<void> {
  for (let index = 0; index < count; index += variant.burst ? BURST : 1) {
    if (variant.burst) {
      await burstOnce(store, variant, next.newcomer, (next.now += 5), next.update);
      next.newcomer += BURST;
      next.update += BURST;
      continue;
    }
    const person = index % 2 === 0 ? index % REGULARS : next.newcomer++;
    answerOnce(store, variant, person, (next.now += 5), ++next.update);
  }
}

export async function run(): Promise<BenchResult> {
  const dir = tempDir('hob-bench-answer-writes-');
  const next = { now: 1_800_000_000_000, update: 0, newcomer: 10_000 };
  const subjects = [];
  for (const [at, variant] of VARIANTS.entries()) {
    const store = openSqliteStore(join(dir, `${at}.db`), { clock: { now: () => next.now } });
    if (variant.checkpointPages) store.db.pragma(`wal_autocheckpoint = ${variant.checkpointPages}`);
    for (let index = 0; index < WARMUP; index++) answerOnce(store, variant, index % REGULARS, (next.now += 5), ++next.update);
    subjects.push({ variant, store, cpu: [] as number[], wall: [] as number[] });
  }
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const subject of subjects) {
        const before = process.cpuUsage();
        const started = performance.now();
        await answers(subject.store, subject.variant, ANSWERS_PER_ROUND, next);
        const spent = process.cpuUsage(before);
        subject.cpu.push((spent.user + spent.system) / 1000 / ANSWERS_PER_ROUND);
        subject.wall.push((performance.now() - started) / ANSWERS_PER_ROUND);
      }
    }
    const base = median(subjects[0]?.cpu ?? []);
    // A burst's lines are compared with hob's burst line, the others with hob's first line.
    const turn = median(subjects.find((subject) => subject.variant.burst === 'turn')?.cpu ?? []);
    const summary = subjects.map(({ variant, cpu, wall }) => {
      const ms = median(cpu);
      const hob = variant.burst ? turn : base;
      const less = variant === VARIANTS[0] || variant.burst === 'turn' ? '' : ` (hob's ${((100 * (ms - hob)) / ms).toFixed(0)}% less)`;
      return `store per answer, ${variant.name}: CPU ${fmt(ms)} ms${less}, best round ${fmt(Math.min(...cpu))}; wall ${fmt(median(wall))} ms (syncs included)`;
    });
    summary.push(...(await pausedBursts(dir, next)));
    for (const line of summary) console.log(line);
    return { name: 'answer writes', summary };
  } finally {
    for (const subject of subjects) subject.store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * PAUSED_BURSTS bursts with a pause after each, on hob's store, then on one whose checkpoints
 * SQLite makes alone (one after the other: an idle checkpoint of one store would otherwise land
 * in the other's burst).
 */
async function pausedBursts(dir: string, next: { now: number; update: number; newcomer: number }): Promise<string[]> {
  const variant: Variant = { name: 'paused', burst: 'turn' };
  const stores = [
    { name: "hob's, checkpoints at idle moments", commits: undefined },
    { name: "SQLite's own (inside the commit that crosses 4,000 pages)", commits: Number.POSITIVE_INFINITY },
  ];
  const lines: string[] = [];
  for (const [at, { name, commits }] of stores.entries()) {
    const store = openSqliteStore(join(dir, `paused-${at}.db`), { clock: { now: () => next.now }, ...(commits ? { idleCheckpointCommits: commits } : {}) });
    const ms: number[] = [];
    try {
      for (let burst = 0; burst < PAUSED_BURSTS; burst++) {
        const started = performance.now();
        await burstOnce(store, variant, next.newcomer, (next.now += 5), next.update);
        ms.push(performance.now() - started);
        next.newcomer += BURST;
        next.update += BURST;
        await sleep(PAUSE_MS);
      }
    } finally {
      store.close();
    }
    const middle = median(ms);
    const slow = ms.filter((one) => one > 2 * middle);
    lines.push(`bursts of ${BURST} new people with a pause after each (${PAUSED_BURSTS}), ${name}: median ${fmt(middle)} ms, slowest ${fmt(Math.max(...ms))} ms; ${slow.length} over twice the median${slow.length ? ` (${slow.map(fmt).join(', ')} ms)` : ''}`);
  }
  return lines;
}

runIfMain(import.meta.url, run);
