/**
 * `hob store migrate --to postgres`: a data dir filled through hob's own repositories is
 * copied into a fresh PostgreSQL database, and everything reads back the same through the
 * Store port — memory search and vector search included.
 */
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runStoreMigrate } from '../../src/cli/store-migrate.js';
import type { HobConfig } from '../../src/config/schema.js';
import type { Message } from '../../src/core/messages.js';
import { encodeOutboxMessage } from '../../src/store/outbox-message.js';
import { PostgresBridge } from '../../src/store/postgres/bridge.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig } from '../support/hob-process.js';
import { postgresSkipReason, testDatabase } from '../support/postgres.js';

const NOW = Date.parse('2026-12-01T10:00:00Z');
const clock = { now: () => NOW };
const said = (role: Message['role'], text: string): Message => ({ role, content: [{ type: 'text', text }] });
const ANN = 'telegram:1';
const BOB = 'slack:U2';

/** A unit vector along one axis, nudged so nearest-neighbour order is unambiguous. */
function vector(dimensions: number, axis: number, nudge = 0): Float32Array {
  const values = new Float32Array(dimensions).fill(nudge);
  values[axis] = 1;
  return values;
}

/** Fills a data dir's SQLite store through the repositories, as hob itself would. */
function fill(store: Store): { session: string } {
  const session = store.conversations.activeSession('telegram:1').id;
  store.conversations.appendMessage(session, said('user', 'Planning the garden party for Saturday'), { personId: ANN, run: 'starts' });
  store.conversations.appendMessage(session, said('assistant', 'Saturday works; I noted the garden party.'), { personId: ANN, run: 'ends' });
  store.conversations.recordUsage(session, 'claude-x', { inputTokens: 120, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 }, 0.002);
  store.conversations.saveBoundary(session, [said('user', 'Summary: a garden party on Saturday')], { trigger: 'auto', level: 1, tokensBefore: 900, tokensAfter: 100 });
  store.conversations.appendMessage(store.conversations.activeSession('slack:D2').id, said('user', 'notes about the boat trip'), { personId: BOB });
  store.inbox.add({ platform: 'telegram', updateId: '77', sessionKey: 'telegram:1', message: '{"text":"queued"}', now: NOW });
  const prompt = store.outbox.add({ platform: 'telegram', chatId: '1', sessionKey: 'telegram:1', message: encodeOutboxMessage({ text: 'Allow bash?' }), now: NOW });
  store.approvals.insert({ id: 'ap1', sessionKey: 'telegram:1', toolUseId: 'toolu_1', requesterId: '1', platform: 'telegram', chatId: '1', threadId: null, toolName: 'bash', input: '{"command":"ls"}', summary: 'ls', createdAt: NOW, expiresAt: NOW + 300_000 });
  store.approvals.setOutbox('ap1', prompt);
  store.pairings.insert({ code: 'PAIR1', platform: 'slack', userId: 'U3', userName: 'Carl', chatId: 'D3', createdAt: NOW, expiresAt: NOW + 3_600_000 });
  store.pairings.approve('PAIR1', 'owner', NOW);
  store.people.newLinkCode(ANN, () => '123456', NOW, NOW + 600_000);
  store.people.join('123456', 'slack', 'U9', 'slack:U9', ANN, NOW);
  store.people.recordWrongCode(BOB, NOW, NOW - 3_600_000, 5);
  store.profiles.set(ANN, 'name', 'Ann', NOW);
  store.profiles.set(ANN, 'timezone', 'Europe/Berlin', NOW);
  store.tokenCalibration.save('claude-x', { ratio: 1.07, samples: 12 });
  store.permissionRules.add('1', { toolName: 'bash', command: 'git status' });
  store.jobs.create({ id: 'j1', ownerId: ANN, createdBy: '1', originSession: 'telegram:1', target: { platform: 'telegram', chatId: '1' }, kind: 'reminder', text: 'water the plants', schedule: { kind: 'every', everyMs: 86_400_000 }, timezone: 'UTC', nextRunAt: NOW, createdAt: NOW });
  store.jobs.claimDue(NOW, 'runner-1', 60_000, 10, (job) => ({ fire: { scheduledFor: job.nextRunAt as number, late: false }, skipped: undefined, next: (job.nextRunAt as number) + 86_400_000 }), () => undefined);
  store.tasks.insert({ id: 't1', kind: 'task', personId: ANN, userId: '1', originSession: 'telegram:1', platform: 'telegram', chatId: '1', threadId: undefined, agent: undefined, description: 'compare plans', prompt: 'compare the three plans', createdAt: NOW }, { runner: 'runner-1', leaseUntil: undefined });
  store.tasks.finish('t1', { status: 'completed', result: 'Plan B is cheapest.', toolUses: 2, inputTokens: 400, outputTokens: 50, costUsd: 0.01 }, NOW + 5000);

  // Memory: Ann's entries with 8-dimension vectors, Bob's with 6 (sqlite-vec keeps those in another kind of table).
  const vectors = store.vectors();
  if (!vectors) throw new Error('sqlite-vec is needed for this test');
  const annNotes = ['Ann prefers tea over coffee', 'Ann is allergic to peanuts', 'Ann plays the cello on Thursdays'];
  annNotes.forEach((content, axis) => {
    const saved = store.memory.save(ANN, { content, tags: axis === 0 ? ['drinks', 'food'] : [], source: 'tool' });
    vectors.put(saved.seq, ANN, vector(8, axis, 0.01 * axis));
  });
  ['Bob sails a small boat', 'Bob lives in Lisbon'].forEach((content, axis) => {
    const saved = store.memory.save(BOB, { content, source: 'extracted' });
    vectors.put(saved.seq, BOB, vector(6, axis));
  });
  return { session };
}

/** What a person's data looks like through the Store port: the same calls on both stores. */
function readBack(store: Store, session: string) {
  const vectors = store.vectors();
  return {
    messages: store.conversations.loadMessages(session),
    usage: store.conversations.usageTotals(session),
    sessions: store.archive.list(null),
    // Both messages match equally; the two stores order such ties (and cut snippets) each their own way.
    sessionSearch: store.archive.search(ANN, 'garden').map(({ sessionId, role, title, at, snippet }) => ({ sessionId, role, title, at, marked: snippet.includes('«garden»') })).sort((a, b) => a.role.localeCompare(b.role)),
    boatSearch: store.archive.search(BOB, 'boat').map((hit) => hit.snippet),
    inbox: store.inbox.queued(),
    outbox: store.outbox.counts(),
    approvals: store.approvals.pending(),
    pairings: store.pairings.list(NOW),
    links: store.people.links(ANN),
    linked: store.people.linkedPerson('slack', 'U9'),
    wrongCodes: store.people.wrongCodesSince(BOB, NOW - 1),
    profile: store.profiles.get(ANN),
    calibration: store.tokenCalibration.load('claude-x'),
    rules: store.permissionRules.all(),
    jobs: store.jobs.list(),
    runs: store.jobs.runs('j1'),
    tasks: store.tasks.listFor(ANN),
    spent: store.tasks.spentBy(ANN),
    memory: [...store.memory.list(ANN), ...store.memory.list(BOB)],
    memorySearch: store.memory.searchText(ANN, 'peanuts allergic', 5).map((hit) => hit.entry.content),
    teaSearch: store.memory.searchText(ANN, 'tea', 5).map((hit) => hit.entry.content),
    nearAnn: vectors?.nearest(ANN, vector(8, 2), 3).map((seq) => store.memory.bySeq(seq)?.content),
    nearBob: vectors?.nearest(BOB, vector(6, 1), 2).map((seq) => store.memory.bySeq(seq)?.content),
  };
}

function migrate(dataDir: string, url: string, force = false): string {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  runStoreMigrate({ data_dir: dataDir } as HobConfig, undefined, { to: 'postgres', force }, '/etc/hob/config.yaml', out, { [`HOB_DATABASE_URL`]: url });
  return text;
}

describe.skipIf(postgresSkipReason)('hob store migrate --to postgres', () => {
  it('copies every table of a data dir, memory and vectors included, and everything reads back the same through the Store port', async () => {
    const dataDir = tempDir('hob-migrate-');
    const sqlite = openSqliteStore(join(dataDir, 'hob.db'), { clock });
    const { session } = fill(sqlite);
    const before = readBack(sqlite, session);
    sqlite.close();
    const { url, cluster } = await testDatabase();

    const printed = migrate(dataDir, url);
    expect(printed).toContain(`Copied ${join(dataDir, 'hob.db')} to PostgreSQL at`);
    expect(printed).toMatch(/memory entries\s+5 rows \(5 in SQLite\)/);
    expect(printed).toMatch(/memory vectors\s+5 rows \(5 in SQLite\)/);
    expect(printed).toMatch(/background tasks\s+1 row  \(1 in SQLite\)/);
    expect(printed).toMatch(/messages\s+3 rows \(3 in SQLite\)/);
    expect(printed).toContain('    kind: postgres');
    expect(printed).toContain('In /etc/hob/config.yaml:');
    expect(printed).not.toContain(cluster.rolePassword);

    const postgres = openPostgresStore(url, { clock });
    try {
      const after = readBack(postgres, session);
      expect(after).toEqual(before);
      // The searches found what they should (not merely the same nothing on both sides).
      expect(after.memorySearch).toEqual(['Ann is allergic to peanuts']);
      expect(after.nearAnn).toEqual(['Ann plays the cello on Thursdays', 'Ann is allergic to peanuts', 'Ann prefers tea over coffee']);
      expect(after.nearBob).toEqual(['Bob lives in Lisbon', 'Bob sails a small boat']);
      expect(after.sessionSearch.map((hit) => [hit.role, hit.marked])).toEqual([['assistant', true], ['user', true]]);
      // Ids continue after the copied ones: new rows do not collide with old ones.
      const next = postgres.outbox.add({ platform: 'telegram', chatId: '1', message: encodeOutboxMessage({ text: 'after the move' }), now: NOW });
      expect(next).toBeGreaterThan(postgres.approvals.get('ap1')?.outboxId as number);
      postgres.memory.save(ANN, { content: 'Ann moved to Hamburg', source: 'tool' });
      expect(postgres.memory.count(ANN)).toBe(4);
    } finally {
      postgres.close();
    }

    // A target that already holds hob data is refused, and left as it was; --force replaces it.
    expect(() => migrate(dataDir, url)).toThrow(/already holds hob data \(.*memory entries.*\)\. Nothing was copied\..*--force/);
    const check = new PostgresBridge({ url });
    try {
      // Still what the target held: the five copied entries and the one written after the move.
      expect(check.query<{ n: number }>('SELECT count(*)::int AS n FROM memory_entries').rows[0]?.n).toBe(6);
    } finally {
      check.close();
    }
    // The command itself, as a person runs it: the URL from the environment.
    const config = writeConfig(dataDir, `data_dir: ${dataDir}\n`);
    const cli = spawnHob(['--config', config, 'store', 'migrate', '--to', 'postgres', '--force'], cleanEnv({ HOB_DATABASE_URL: url }));
    expect(await cli.exited).toBe(0);
    expect(cli.output()).toMatch(/memory entries\s+5 rows \(5 in SQLite\)/);
    expect(cli.output()).toMatch(/outbox\s+1 row  \(1 in SQLite\)/);
    expect(cli.output()).toContain(`In ${config}:`);
    expect(cli.output()).not.toContain(cluster.rolePassword);
    // A fresh database, two copies and a spawned CLI: longer than the default under a loaded machine.
  }, 60_000);

  it('says what is missing, naming the fix, without touching anything', () => {
    const empty = tempDir('hob-migrate-none-');
    expect(() => migrate(empty, 'postgres://hob:secret@127.0.0.1:1/hob')).toThrow(/There is no hob database at .*hob\.db to copy/);
    expect(() => runStoreMigrate({ data_dir: empty } as HobConfig, undefined, { to: 'mysql' }, undefined, new PassThrough(), {})).toThrow(/copies to PostgreSQL only: run hob store migrate --to postgres .* \(not --to mysql\)/);
    expect(() => runStoreMigrate({ data_dir: empty } as HobConfig, undefined, { to: 'postgres' }, undefined, new PassThrough(), {})).toThrow(/or set HOB_DATABASE_URL/);
  });
});
