/**
 * Several `hob start` processes on one PostgreSQL database (issue 23), against the fake Slack
 * (one Socket Mode connection per process, events spread across them) and an instant fake
 * model: messages answered per second with 1, 2 and 3 processes beside one process on SQLite
 * (200 conversations, 2 messages each, 40 of them talking at a time, each waiting for its
 * answer before its next message), and the takeover time after kill -9 of the process running a conversation
 * (from the kill to the cut-off run's answer, at cluster.lease_ms 1500). Discord: the same
 * throughput against the fake Discord, a server per conversation spread over two shards, run
 * by one process (both shards) or two (one shard each).
 */
import { join } from 'node:path';
import { startFakeAnthropic, type FakeAnthropic } from '../test/fakes/anthropic.js';
import { BOT_ID, startFakeDiscord } from '../test/fakes/discord/index.js';
import { dmOf, startFakeSlack, type FakeSlack } from '../test/fakes/slack/index.js';
import { ensureBuiltDist } from '../test/support/built-dist.js';
import { answersIn, answerTokens, exchange, liftEditLimit, lastToken, people, startNode, type HobNode } from '../test/support/hob-cluster.js';
import { createDatabase, postgresSkipReason, startCluster, stopCluster, type Cluster } from '../test/support/postgres.js';
import pg from 'pg';
import { fmt, runIfMain, type BenchResult } from './stats.js';

const CONVERSATIONS = 200;
const MESSAGES = 2;
const IN_FLIGHT = 40;
const TAKEOVER_LEASE_MS = 1500;
const DISCORD_SERVERS = 60;

type Bed = { model: FakeAnthropic; slack: FakeSlack; nodes: HobNode[] };

async function withBed<T>(count: number, url: string | undefined, leaseMs: number, use: (bed: Bed, everyone: ReturnType<typeof people>) => Promise<T>, slow?: (token: string) => number): Promise<T> {
  const model = await startFakeAnthropic();
  const slack = await startFakeSlack();
  liftEditLimit(slack);
  const everyone = people(CONVERSATIONS + 1);
  for (const person of everyone) slack.person(person);
  answerTokens(model, slow);
  const nodes: HobNode[] = [];
  try {
    nodes.push(...(await Promise.all(Array.from({ length: count }, () => startNode({ model, slack, people: everyone, ...(url ? { url } : {}), leaseMs })))));
    return await use({ model, slack, nodes }, everyone);
  } finally {
    for (const node of nodes) node.kill();
    await model.close();
    await slack.close().catch(() => undefined);
  }
}

async function throughput(count: number, url: string | undefined): Promise<number> {
  return withBed(count, url, 15_000, async ({ slack }, everyone) => {
    const started = performance.now();
    let next = 0;
    // At most IN_FLIGHT conversations talk at once, each one message after the other.
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (let index = next++; index < CONVERSATIONS; index = next++) {
          const person = everyone[index] ?? everyone[0]!;
          for (let n = 1; n <= MESSAGES; n++) await exchange(slack, person, `c${index}-m${n}`, 120_000);
        }
      }),
    );
    const rate = (CONVERSATIONS * MESSAGES) / ((performance.now() - started) / 1000);
    // The figure counts only if every conversation got each answer once, in order.
    for (let index = 0; index < CONVERSATIONS; index++) {
      const person = everyone[index] ?? everyone[0]!;
      const seen = answersIn(slack, person).join(' ');
      const expected = Array.from({ length: MESSAGES }, (_, n) => `c${index}-m${n + 1}`).join(' ');
      if (seen !== expected) throw new Error(`conversation ${index} shows "${seen}", expected "${expected}" (an answer lost, doubled or out of order)`);
    }
    return rate;
  });
}

async function takeover(url: string): Promise<number> {
  let first = true;
  const slowToken = 'c999-m1';
  return withBed(2, url, TAKEOVER_LEASE_MS, async ({ model, slack, nodes }, everyone) => {
    const person = everyone[CONVERSATIONS] ?? everyone[0]!;
    await slack.dm(person, `please answer ${slowToken}`);
    await slack.waitFor(() => model.requests.some((request) => lastToken(request.body) === slowToken), 30_000, 'the run to start');
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const owner = (await db.query<{ node_id: string }>("SELECT node_id FROM conversation_leases WHERE session_key LIKE '%' || $1", [dmOf(person.id)])).rows[0]?.node_id ?? '';
    await db.end();
    const victim = nodes.find((node) => owner.split(':')[1] === String(node.child.pid));
    if (!victim) throw new Error(`no process runs the conversation (${owner})`);
    const killed = performance.now();
    victim.kill();
    await slack.waitFor(() => answersIn(slack, person).includes(slowToken), 60_000, 'the resumed answer');
    return performance.now() - killed;
  }, (token) => {
    if (token !== slowToken || !first) return 0;
    first = false;
    return 120_000;
  });
}

/** Messages per second on Discord: `split` processes share the bot's two shards (1: one runs both). */
async function discordThroughput(split: 1 | 2, url: string): Promise<number> {
  const model = await startFakeAnthropic();
  const slack = await startFakeSlack();
  const discord = await startFakeDiscord();
  discord.buckets.limit = 10_000;
  answerTokens(model);
  const person = { id: '310000000000000000', name: 'person' };
  const rooms = Array.from({ length: DISCORD_SERVERS }, (_, index) => discord.addGuild(`server ${index}`, [index % 2, 2]).channelId);
  const answered = (channelId: string, token: string) => discord.botMessages(channelId).some((message) => message.content === `answer ${token}`);
  const nodes: HobNode[] = [];
  try {
    const shards = split === 1 ? [[0, 1]] : [[0], [1]];
    const options = (ids: number[]) => ({ model, slack, people: people(1), url, discord: { token: discord.token, apiRoot: discord.apiRoot, allow: [person.id], shards: { ids, count: 2 } } });
    nodes.push(...(await Promise.all(shards.map((ids) => startNode(options(ids))))));
    const started = performance.now();
    await Promise.all(
      rooms.map(async (channelId, index) => {
        for (let n = 1; n <= MESSAGES; n++) {
          const token = `c${index}-m${n}`;
          discord.say(person, channelId, `<@${BOT_ID}> please answer ${token}`);
          await discord.waitFor(() => answered(channelId, token), 120_000, `the answer to ${token}`).catch((error: unknown) => {
            const shown = discord.botMessages(channelId).map((message) => JSON.stringify(message.content));
            throw new Error(`${error instanceof Error ? error.message : String(error)}; server ${index} shows from hob: ${shown.join(', ') || 'nothing'}`);
          });
        }
      }),
    );
    const rate = (DISCORD_SERVERS * MESSAGES) / ((performance.now() - started) / 1000);
    // The figure counts only if every server shows each answer once, in order (a live answer is edited in place, so none stays behind).
    for (const [index, channelId] of rooms.entries()) {
      const seen = discord.botMessages(channelId).map((message) => message.content);
      const expected = Array.from({ length: MESSAGES }, (_, n) => `answer c${index}-m${n + 1}`);
      if (seen.join(' | ') !== expected.join(' | ')) throw new Error(`server ${index} shows "${seen.join(' | ')}", expected "${expected.join(' | ')}" (an answer lost, doubled or out of order)`);
    }
    return rate;
  } finally {
    for (const node of nodes) node.kill();
    await model.close();
    await slack.close().catch(() => undefined);
    await discord.close();
  }
}

export async function run(): Promise<BenchResult> {
  if (postgresSkipReason) {
    const line = `cluster: not measured (${postgresSkipReason})`;
    console.log(line);
    return { name: 'cluster', summary: [line] };
  }
  ensureBuiltDist(join(import.meta.dirname, '..'));
  const summary: string[] = [];
  const say = (line: string) => {
    console.log(line);
    summary.push(line);
  };
  // BENCH_CLUSTER_ONLY=slack|discord|takeover runs one part (to iterate on it); unset runs all three.
  const only = process.env.BENCH_CLUSTER_ONLY;
  const part = (name: string) => !only || only === name;
  const cluster: Cluster = await startCluster();
  try {
    if (part('slack')) {
      const sqlite = await throughput(1, undefined);
      const rates: string[] = [];
      for (const count of [1, 2, 3]) rates.push(`${count} process${count > 1 ? 'es' : ''} ${fmt(await throughput(count, await createDatabase(cluster)))}`);
      say(`cluster: messages answered per second (${CONVERSATIONS} conversations × ${MESSAGES}, ${IN_FLIGHT} at a time, Slack Socket Mode, instant model): PostgreSQL ${rates.join(', ')}; SQLite 1 process ${fmt(sqlite)}`);
    }
    if (part('discord')) {
      const discord = [`1 process (both shards) ${fmt(await discordThroughput(1, await createDatabase(cluster)))}`, `2 processes (a shard each) ${fmt(await discordThroughput(2, await createDatabase(cluster)))}`];
      say(`cluster: Discord messages answered per second (${DISCORD_SERVERS} servers over 2 shards × ${MESSAGES}, all at once, instant model) on PostgreSQL: ${discord.join(', ')}`);
    }
    if (part('takeover')) {
      const ms = await takeover(await createDatabase(cluster));
      say(`cluster: kill -9 of the process running a conversation → its cut-off run answered by another process after ${fmt(ms / 1000)} s (cluster.lease_ms ${TAKEOVER_LEASE_MS})`);
    }
  } finally {
    stopCluster(cluster);
  }
  return { name: 'cluster', summary };
}

runIfMain(import.meta.url, run);
