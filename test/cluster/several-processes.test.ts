/**
 * issue 23: three `hob start` processes on one PostgreSQL database serve one Slack app, each
 * with its own Socket Mode connection (the fake spreads the events across them, as Slack
 * does), one Telegram bot in webhook mode behind the fake's balancer (updates take turns
 * between the processes), and one Discord bot whose two gateway shards the first two split
 * (`channels.discord.shards`; the fake gateway sends a server's events to the shard it maps
 * to and DMs to shard 0, as Discord does). Every message is answered once, in order,
 * whichever process received it; a process killed mid-run is taken over within the lease, its
 * run resumed, nothing lost or doubled. The first two also carry the presses across processes
 * (./presses-across.ts: a button pressed or a command typed through one process acts on the
 * run in the other). The processes are started once for the file (a start costs two to three
 * seconds of CPU): the cases that end one come last in each part, and the Discord part starts
 * a new process on the shard it ended. Counts are small: they prove the spread and the order;
 * bench/cluster.ts keeps large ones.
 */
import '../support/env.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { dmOf, startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { answersIn, answerTokens, exchange, freePort, liftEditLimit, lastToken, people, startNode, type HobClusterOptions, type HobNode } from '../support/hob-cluster.js';
import { postgresSkipReason, testDatabase } from '../support/postgres.js';
import { discordPeople, discordRooms, discordShardCases } from './discord-shards.js';
import { ann, bob, pressesAcrossCases, team } from './presses-across.js';

const LEASE_MS = 1500;
/** Slack conversations, two a process (the fake hands envelopes to the connections in turn); two messages each. */
const CONVERSATIONS = 6;
const everyone = people(CONVERSATIONS + 10);
/** Telegram conversations behind the webhook balancer (it takes turns), two a process; two messages each. */
const users = Array.from({ length: 6 }, (_, index) => ({ id: 1000 + index, first_name: `Person${index}` }));
/** The conversation whose run is cut off by the kill: its first answer takes a while. */
const SLOW = 'c900-m1';
/** The conversation whose run a stop (SIGTERM) cuts off. */
const STOPPED = 'c901-m1';
/** The Discord run cut off by the kill of shard 1's process. */
const DISCORD_SLOW = 'c29-m1';

let model: FakeAnthropic;
let slack: FakeSlack;
let telegram: FakeTelegram;
let discord: FakeDiscord;
let db: pg.Client;
const nodes: HobNode[] = [];
const asked = new Map<string, number>();
/** Process `index`'s options: a Slack label and a webhook port of its own; shard `index` of two for the first two. */
let options: (index: number, label: string, port: number) => HobClusterOptions;
/** The processes that run a Discord shard, by shard (the Discord part replaces shard 1's). */
const shardNodes: HobNode[] = [];
let rooms: ReturnType<typeof discordRooms> = [];

describe.skipIf(postgresSkipReason)('several hob processes on one database', () => {
  beforeAll(async () => {
    const { url } = await testDatabase();
    [model, slack, telegram, discord] = await Promise.all([startFakeAnthropic(), startFakeSlack(), startFakeTelegram({ botUsername: 'hob_bot' }), startFakeDiscord()]);
    liftEditLimit(slack);
    for (const person of [...everyone, ann, bob]) slack.person(person);
    rooms = discordRooms(discord);
    answerTokens(model, (token) => {
      const times = (asked.get(token) ?? 0) + 1;
      asked.set(token, times);
      return (token === SLOW || token === STOPPED || token === DISCORD_SLOW) && times === 1 ? 60_000 : 0;
    });
    db = new pg.Client({ connectionString: url });
    await db.connect();
    const allow = users.map((user) => String(user.id));
    const discordAllow = discordPeople.map((person) => person.id);
    options = (index, label, port) => ({
      model,
      slack,
      // Ann first: the owner, who may switch the permission mode (./presses-across.ts).
      people: [ann, bob, ...everyone],
      slackChannels: [team],
      label,
      url,
      leaseMs: LEASE_MS,
      telegram: { token: telegram.token, apiRoot: telegram.apiRoot, port, allow },
      ...(index < 2 ? { discord: { token: discord.token, apiRoot: discord.apiRoot, allow: discordAllow, shards: { ids: [index], count: 2 } } } : {}),
    });
    const ports = await Promise.all([0, 1, 2].map(() => freePort()));
    nodes.push(...(await Promise.all(ports.map((port, index) => startNode(options(index, `n${index}`, port))))));
    shardNodes.push(nodes[0]!, nodes[1]!);
    telegram.balanceWebhook(ports.map((port) => `http://127.0.0.1:${port}/telegram`));
  }, 90_000);

  afterAll(async () => {
    for (const node of nodes) node.kill();
    await db?.end();
    await model?.close();
    await slack?.close();
    await telegram?.close();
    await discord?.close();
  });

  it('answers every message of many conversations once and in order, across the processes', async () => {
    expect(slack.socket.open()).toHaveLength(3);
    const talkers = everyone.slice(0, CONVERSATIONS);
    await Promise.all(
      talkers.map(async (person, index) => {
        for (const n of [1, 2]) await exchange(slack, person, `c${index}-m${n}`, 30_000);
      }),
    );
    for (const [index, person] of talkers.entries()) expect(answersIn(slack, person)).toEqual([`c${index}-m1`, `c${index}-m2`]);
    // The conversations are spread over the processes, each held by one.
    const owners = await db.query<{ node_id: string; n: string }>('SELECT node_id, count(*) n FROM conversation_leases GROUP BY node_id');
    expect(owners.rows.length).toBeGreaterThan(1);
    expect(owners.rows.reduce((sum, row) => sum + Number(row.n), 0)).toBe(CONVERSATIONS);
  }, 120_000);

  it('answers every Telegram message once and in order, the webhook updates spread over the processes', async () => {
    const answers = (id: number) => telegram.chat(id).map((message) => message.text.replace(/^answer /, ''));
    await Promise.all(
      users.map(async (user, index) => {
        for (const n of [1, 2]) {
          const token = `c${100 + index}-m${n}`;
          telegram.sendText(user, { id: user.id, type: 'private' }, `please answer ${token}`);
          await telegram.waitFor(() => answers(user.id).includes(token), 30_000, `the answer to ${token}`);
        }
      }),
    );
    for (const [index, user] of users.entries()) expect(answers(user.id)).toEqual([`c${100 + index}-m1`, `c${100 + index}-m2`]);
    const targets = new Set(telegram.webhookDeliveries.filter((delivery) => delivery.status === 200).map((delivery) => delivery.target));
    expect(targets.size).toBe(3);
  }, 90_000);

  // Before the Discord part, which ends the second process: the presses go through it.
  pressesAcrossCases({ model: () => model, slack: () => slack, db: () => db, a: () => nodes[0]!, b: () => nodes[1]! });

  // The Discord part (./discord-shards.ts) ends shard 1's process and starts a new one on that
  // shard, serving Slack and Telegram too, so the Slack cases below still find three processes.
  discordShardCases({
    discord: () => discord,
    model: () => model,
    db: () => db,
    rooms: () => rooms,
    shardNodes,
    slowToken: DISCORD_SLOW,
    restartShardOne: async () => {
      const restarted = await startNode(options(1, 'n1-again', await freePort()));
      nodes.push(restarted);
      shardNodes[1] = restarted;
      return restarted;
    },
  });

  it('a process killed mid-run: another takes its conversations over, resumes the run, loses and doubles nothing', async () => {
    const slowOne = everyone[CONVERSATIONS] ?? everyone[0]!;
    // It starts in a process that holds some of the first conversations (the one that came
    // back on shard 1 may hold none); the spread puts the rest anywhere.
    const leases = (await db.query<{ node_id: string; session_key: string }>('SELECT node_id, session_key FROM conversation_leases')).rows;
    const holds = (node: HobNode) => leases.some((row) => pidOf(row.node_id) === node.child.pid && everyone.slice(0, CONVERSATIONS).some((person) => row.session_key.includes(dmOf(person.id))));
    slack.socket.deliverOn = nodes.find((node) => isLive(node) && holds(node))?.label;
    await slack.dm(slowOne, `please answer ${SLOW}`);
    slack.socket.deliverOn = undefined;
    await slack.waitFor(() => model.requests.some((request) => lastToken(request.body) === SLOW), 20_000, 'the slow run to start');
    const owner = await ownerOf(dmOf(slowOne.id));
    const victim = nodes.find((node) => isLive(node) && pidOf(owner) === node.child.pid);
    if (!victim) throw new Error(`no process is ${owner}`);
    // Conversations the victim runs get new messages right after it dies (each arrives at a live process).
    const orphaned = (await db.query<{ session_key: string }>('SELECT session_key FROM conversation_leases WHERE node_id = $1', [owner])).rows.map((row) => row.session_key);
    const talkers = everyone.slice(0, CONVERSATIONS).filter((person) => orphaned.some((key) => key.includes(dmOf(person.id))));
    expect(talkers.length).toBeGreaterThan(0);
    victim.kill();
    await victim.exited;
    await Promise.all(talkers.map((person) => exchange(slack, person, `c${everyone.indexOf(person)}-m3`, 30_000)));
    await slack.waitFor(() => answersIn(slack, slowOne).includes(SLOW), 30_000, 'the cut-off run to be answered by another process');
    expect(answersIn(slack, slowOne)).toEqual([SLOW]);
    for (const person of talkers) {
      const index = everyone.indexOf(person);
      expect(answersIn(slack, person)).toEqual([`c${index}-m1`, `c${index}-m2`, `c${index}-m3`]);
    }
    // The survivors hold what the victim held.
    const after = await ownerOf(dmOf(slowOne.id));
    expect(after).not.toBe(owner);
    expect(slack.socket.open()).toHaveLength(2);
  }, 90_000);

  it('a process that stops hands its conversations over: the run it cut off is answered once by another', async () => {
    const person = everyone[CONVERSATIONS + 1] ?? everyone[0]!;
    await slack.dm(person, `please answer ${STOPPED}`);
    await slack.waitFor(() => model.requests.some((request) => lastToken(request.body) === STOPPED), 20_000, 'the run to start');
    const owner = await ownerOf(dmOf(person.id));
    const stopping = nodes.find((node) => isLive(node) && pidOf(owner) === node.child.pid);
    if (!stopping) throw new Error(`no running process is ${owner}`);
    stopping.child.kill('SIGTERM');
    expect(await stopping.exited).toBe(0);
    await slack.waitFor(() => answersIn(slack, person).includes(STOPPED), 30_000, 'the cut-off run to be answered by the other process');
    expect(answersIn(slack, person)).toEqual([STOPPED]);
    expect(await ownerOf(dmOf(person.id))).not.toBe(owner);
  }, 60_000);
});

async function ownerOf(chat: string): Promise<string> {
  const row = (await db.query<{ node_id: string }>("SELECT node_id FROM conversation_leases WHERE session_key LIKE '%' || $1 || '%'", [chat])).rows[0];
  if (!row) throw new Error(`no lease for ${chat}`);
  return row.node_id;
}

/** A node id is `<host>:<pid>:<random>` (src/core/runner-id.ts). */
function pidOf(nodeId: string): number {
  return Number(nodeId.split(':')[1]);
}

function isLive(node: HobNode): boolean {
  return node.child.exitCode === null && node.child.signalCode === null;
}
