/**
 * issue 23: two `hob start` processes on one PostgreSQL database split the Discord bot's two
 * gateway shards (`channels.discord.shards`): the fake gateway sends a server's events to the
 * shard it maps to and DMs to shard 0, as Discord does. Every message of servers on both
 * shards and of DMs is answered once and in order by the process its shard runs on; a process
 * killed mid-run has its run finished by the other one, and a new process on its shard goes on
 * from there, nothing doubled.
 */
import '../support/env.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { BOT_ID, GENERAL_ID, shardOf, startFakeDiscord, type FakeDiscord, type FakePerson } from '../fakes/discord/index.js';
import { answerTokens, lastToken, startNode, type HobClusterOptions, type HobNode } from '../support/hob-cluster.js';
import { postgresSkipReason, testDatabase } from '../support/postgres.js';

const LEASE_MS = 1500;
/** The run cut off by the kill: its first model call takes a while. */
const SLOW = 'c9-m1';
const persons: FakePerson[] = Array.from({ length: 6 }, (_, index) => ({ id: `31000000000000000${index}`, name: `person${index}` }));

let model: FakeAnthropic;
let discord: FakeDiscord;
let db: pg.Client;
let options: (shard: number) => HobClusterOptions;
const nodes: HobNode[] = [];
const asked = new Map<string, number>();
/** Where each conversation is held: three servers' #general (shards 1, 0, 1) and two DMs (shard 0). */
let rooms: { channelId: string; person: FakePerson; shard: number }[] = [];

describe.skipIf(postgresSkipReason)('two hob processes splitting the Discord shards', () => {
  beforeAll(async () => {
    const { url } = await testDatabase();
    model = await startFakeAnthropic();
    discord = await startFakeDiscord();
    discord.buckets.limit = 1000;
    const second = discord.addGuild('Shard zero guild', [0, 2]);
    const third = discord.addGuild('Another shard one guild', [1, 2]);
    const [p0, p1, p2, p3, p4] = persons as [FakePerson, FakePerson, FakePerson, FakePerson, FakePerson];
    rooms = [
      { channelId: GENERAL_ID, person: p0, shard: 1 },
      { channelId: second.channelId, person: p1, shard: 0 },
      { channelId: third.channelId, person: p2, shard: 1 },
      { channelId: discord.dmChannelOf(p3), person: p3, shard: 0 },
      { channelId: discord.dmChannelOf(p4), person: p4, shard: 0 },
    ];
    answerTokens(model, (token) => {
      const times = (asked.get(token) ?? 0) + 1;
      asked.set(token, times);
      return token === SLOW && times === 1 ? 60_000 : 0;
    });
    db = new pg.Client({ connectionString: url });
    await db.connect();
    const discordOf = (shard: number) => ({ token: discord.token, apiRoot: discord.apiRoot, allow: persons.map((person) => person.id), shards: { ids: [shard], count: 2 } });
    // Discord only: each process loads and connects nothing else.
    options = (shard) => ({ model, url, leaseMs: LEASE_MS, discord: discordOf(shard) });
    nodes.push(...(await Promise.all([0, 1].map((shard) => startNode(options(shard))))));
  }, 90_000);

  afterAll(async () => {
    for (const node of nodes) node.kill();
    await db?.end();
    await model?.close();
    await discord?.close();
  });

  it('answers every message once and in order, each by the process whose shard the event went to', async () => {
    expect(discord.gateway.liveShards()).toEqual([0, 1]);
    expect(rooms.map((room) => shardOf(discord.channels.get(room.channelId)?.guildId, 2))).toEqual(rooms.map((room) => room.shard));
    await Promise.all(
      rooms.map(async (room, index) => {
        for (const n of [1, 2]) await exchange(room, `c${index}-m${n}`);
      }),
    );
    for (const [index, room] of rooms.entries()) expect(answersIn(room.channelId)).toEqual([`c${index}-m1`, `c${index}-m2`]);
    // The process that received a conversation's events holds it: shard 0's process the DMs and its server, shard 1's the other two.
    for (const room of rooms) expect(await ownerPid(room.channelId)).toBe(nodes[room.shard]?.child.pid);
    // The command menu is one bot's: registered once, by the process that runs shard 0.
    expect(discord.restCalls('PUT', /\/commands$/)).toHaveLength(1);
  }, 90_000);

  it('a command is acknowledged once, by the process its shard runs on, and answered privately', async () => {
    const room = rooms[2]!;
    const command = discord.slash(room.person, room.channelId, 'status');
    await discord.waitFor(() => discord.noticesFor(room.person).find((notice) => notice.includes('Model: claude-test')), 15_000, 'the private /status answer');
    expect(discord.acksOf(command)).toEqual([5]);
  }, 30_000);

  it('a process killed mid-run: the other finishes the run once; a new process on its shard goes on from there', async () => {
    const room = rooms[2]!;
    const [zero, one] = nodes as [HobNode, HobNode];
    await send(room, SLOW);
    await discord.waitFor(() => model.requests.some((request) => lastToken(request.body) === SLOW), 20_000, 'the slow run to start');
    expect(await ownerPid(room.channelId)).toBe(one.child.pid);
    one.kill();
    await one.exited;
    await discord.waitFor(() => answersIn(room.channelId).includes(SLOW), 30_000, 'the cut-off run to be answered');
    expect(await ownerPid(room.channelId)).toBe(zero.child.pid);
    // Shard 1 has no receiver until a process runs it again.
    const restarted = await startNode(options(1));
    nodes.push(restarted);
    expect(discord.gateway.liveShards()).toEqual([0, 1]);
    await exchange(room, 'c9-m2');
    await exchange(rooms[0]!, 'c0-m3');
    expect(answersIn(room.channelId)).toEqual(['c2-m1', 'c2-m2', SLOW, 'c9-m2']);
    expect(answersIn(rooms[0]!.channelId)).toEqual(['c0-m1', 'c0-m2', 'c0-m3']);
    // The new shard 1 process left the command menu alone.
    expect(discord.restCalls('PUT', /\/commands$/)).toHaveLength(1);
  }, 90_000);
});

/** What hob shows in a channel, as answer tokens in order. */
function answersIn(channelId: string): string[] {
  return discord.botMessages(channelId).map((message) => message.content.replace(/^answer /, ''));
}

async function send(room: { channelId: string; person: FakePerson }, token: string): Promise<void> {
  const inServer = discord.channels.get(room.channelId)?.guildId !== undefined;
  discord.say(room.person, room.channelId, `${inServer ? `<@${BOT_ID}> ` : ''}please answer ${token}`);
}

async function exchange(room: { channelId: string; person: FakePerson }, token: string): Promise<void> {
  await send(room, token);
  await discord.waitFor(() => answersIn(room.channelId).includes(token), 30_000, `the answer to ${token}`);
}

async function ownerPid(channelId: string): Promise<number | undefined> {
  const row = (await db.query<{ node_id: string }>("SELECT node_id FROM conversation_leases WHERE session_key LIKE '%' || $1 || '%'", [channelId])).rows[0];
  return row ? Number(row.node_id.split(':')[1]) : undefined;
}
