/**
 * issue 23, the Discord part of several-processes.test.ts (its processes, started once for
 * the file): two `hob start` processes on one PostgreSQL database split the Discord bot's two
 * gateway shards (`channels.discord.shards`): the fake gateway sends a server's events to the
 * shard it maps to and DMs to shard 0, as Discord does. Every message of servers on both
 * shards and of DMs is answered once and in order by the process its shard runs on; a process
 * killed mid-run has its run finished by the other one, and a new process on its shard goes
 * on from there, nothing doubled.
 */
import type pg from 'pg';
import { expect, it } from 'vitest';
import type { FakeAnthropic } from '../fakes/anthropic.js';
import { BOT_ID, GENERAL_ID, shardOf, type FakeDiscord, type FakePerson } from '../fakes/discord/index.js';
import { lastToken, type HobNode } from '../support/hob-cluster.js';

/** Who may talk to hob on Discord. */
export const discordPeople: FakePerson[] = Array.from({ length: 6 }, (_, index) => ({ id: `31000000000000000${index}`, name: `person${index}` }));

type Room = { channelId: string; person: FakePerson; shard: number };

/**
 * Before the processes start (a server is announced when a shard connects): three servers'
 * #general (shards 1, 0, 1) and two DMs (shard 0), where the conversations of the cases are held.
 */
export function discordRooms(discord: FakeDiscord): Room[] {
  discord.buckets.limit = 1000;
  const second = discord.addGuild('Shard zero guild', [0, 2]);
  const third = discord.addGuild('Another shard one guild', [1, 2]);
  const [p0, p1, p2, p3, p4] = discordPeople as [FakePerson, FakePerson, FakePerson, FakePerson, FakePerson];
  return [
    { channelId: GENERAL_ID, person: p0, shard: 1 },
    { channelId: second.channelId, person: p1, shard: 0 },
    { channelId: third.channelId, person: p2, shard: 1 },
    { channelId: discord.dmChannelOf(p3), person: p3, shard: 0 },
    { channelId: discord.dmChannelOf(p4), person: p4, shard: 0 },
  ];
}

export type DiscordShardsContext = {
  discord(): FakeDiscord;
  model(): FakeAnthropic;
  db(): pg.Client;
  rooms(): Room[];
  /** The process running each shard, by shard. */
  shardNodes: HobNode[];
  /** The token of the run the kill cuts off: its first model call takes a while. */
  slowToken: string;
  /** Starts a new process on shard 1 (once its own is gone) and returns it. */
  restartShardOne(): Promise<HobNode>;
};

/** Defines the Discord cases (in the caller's describe, after its hooks); tokens are c20–c29. */
export function discordShardCases(context: DiscordShardsContext): void {
  const discord = () => context.discord();
  const answersIn = (channelId: string) => discord().botMessages(channelId).map((message) => message.content.replace(/^answer /, ''));
  const send = (room: Room, token: string) => {
    const inServer = discord().channels.get(room.channelId)?.guildId !== undefined;
    discord().say(room.person, room.channelId, `${inServer ? `<@${BOT_ID}> ` : ''}please answer ${token}`);
  };
  const exchange = async (room: Room, token: string) => {
    send(room, token);
    await discord().waitFor(() => answersIn(room.channelId).includes(token), 30_000, `the answer to ${token}`);
  };
  const ownerPid = async (channelId: string) => {
    const row = (await context.db().query<{ node_id: string }>("SELECT node_id FROM conversation_leases WHERE session_key LIKE '%' || $1 || '%'", [channelId])).rows[0];
    return row ? Number(row.node_id.split(':')[1]) : undefined;
  };

  it('Discord: answers every message once and in order, each by the process whose shard the event went to', async () => {
    const rooms = context.rooms();
    expect(discord().gateway.liveShards()).toEqual([0, 1]);
    expect(rooms.map((room) => shardOf(discord().channels.get(room.channelId)?.guildId, 2))).toEqual(rooms.map((room) => room.shard));
    await Promise.all(
      rooms.map(async (room, index) => {
        for (const n of [1, 2]) await exchange(room, `c${20 + index}-m${n}`);
      }),
    );
    for (const [index, room] of rooms.entries()) expect(answersIn(room.channelId)).toEqual([`c${20 + index}-m1`, `c${20 + index}-m2`]);
    // The process that received a conversation's events holds it: shard 0's process the DMs and its server, shard 1's the other two.
    for (const room of rooms) expect(await ownerPid(room.channelId)).toBe(context.shardNodes[room.shard]?.child.pid);
    // The command menu is one bot's: registered once, by the process that runs shard 0.
    expect(discord().restCalls('PUT', /\/commands$/)).toHaveLength(1);
  }, 90_000);

  it('Discord: a command is acknowledged once, by the process its shard runs on, and answered privately', async () => {
    const room = context.rooms()[2]!;
    const command = discord().slash(room.person, room.channelId, 'status');
    await discord().waitFor(() => discord().noticesFor(room.person).find((notice) => notice.includes('Model: claude-test')), 15_000, 'the private /status answer');
    expect(discord().acksOf(command)).toEqual([5]);
  }, 30_000);

  it('Discord: a process killed mid-run: the other finishes the run once; a new process on its shard goes on from there', async () => {
    const rooms = context.rooms();
    const room = rooms[2]!;
    const [zero, one] = context.shardNodes as [HobNode, HobNode];
    const slow = context.slowToken;
    send(room, slow);
    await discord().waitFor(() => context.model().requests.some((request) => lastToken(request.body) === slow), 20_000, 'the slow run to start');
    expect(await ownerPid(room.channelId)).toBe(one.child.pid);
    one.kill();
    await one.exited;
    await discord().waitFor(() => answersIn(room.channelId).includes(slow), 30_000, 'the cut-off run to be answered');
    expect(await ownerPid(room.channelId)).toBe(zero.child.pid);
    // Shard 1 has no receiver until a process runs it again.
    await context.restartShardOne();
    expect(discord().gateway.liveShards()).toEqual([0, 1]);
    const next = slow.replace(/-m1$/, '-m2');
    await exchange(room, next);
    await exchange(rooms[0]!, 'c20-m3');
    expect(answersIn(room.channelId)).toEqual(['c22-m1', 'c22-m2', slow, next]);
    expect(answersIn(rooms[0]!.channelId)).toEqual(['c20-m1', 'c20-m2', 'c20-m3']);
    // The new shard 1 process left the command menu alone.
    expect(discord().restCalls('PUT', /\/commands$/)).toHaveLength(1);
  }, 90_000);
}
