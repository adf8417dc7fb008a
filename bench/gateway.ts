/**
 * What the gateway adds to a reply, with an instant model and the in-memory channel: the
 * time from a message handed to the gateway's sink to its reply handed to the adapter's
 * `send` (access check, inbox row, queue, engine + SQLite appends, outbox row, reply
 * formatting), at 1, 100 and 1,000 conversations writing at once; throughput at 1,000; and
 * memory per idle conversation before and after eviction.
 *
 * Memory figures need `node --expose-gc --import tsx bench/gateway.ts` (bench/run.ts does that).
 */
import { rmSync } from 'node:fs';
import type { OutboundMessage, Target } from '../src/gateway/channel.js';
import { MemoryChannel, type Person } from '../test/fakes/memory-channel.js';
import { startTestGateway, type TestGateway } from '../test/support/gateway.js';
import { InstantModel } from './instant-model.js';
import { collectGarbage, fmt, fmtBytes, median, percentile, runIfMain, type BenchResult } from './stats.js';

/** Concurrency level → timed rounds (each round: every conversation sends one message). */
const LEVELS: { conversations: number; rounds: number }[] = [
  { conversations: 1, rounds: 500 },
  { conversations: 100, rounds: 10 },
  { conversations: 1_000, rounds: 3 },
];
const IDLE_CONVERSATIONS = 5_000;
const REPLY = 'Done.';

/** Times messages from `say` to the reply reaching the adapter's send, per chat. */
class ReplyClock {
  private readonly sentAt = new Map<string, number>();
  private waiting: { remaining: number; resolve: () => void } | undefined;
  readonly latenciesMs: number[] = [];

  constructor(private readonly channel: MemoryChannel) {
    channel.onSend = (target: Target, message: OutboundMessage) => {
      if (message.text !== REPLY) return;
      const started = this.sentAt.get(target.chatId);
      if (started === undefined) return; // only the first reply of a round counts
      this.sentAt.delete(target.chatId);
      this.latenciesMs.push(performance.now() - started);
      if (this.waiting && --this.waiting.remaining === 0) this.waiting.resolve();
    };
  }

  /** Every person sends one message at once; resolves when every reply was handed to send. */
  async round(people: Person[]): Promise<number> {
    const done = new Promise<void>((resolve) => (this.waiting = { remaining: people.length, resolve }));
    const started = performance.now();
    for (const person of people) {
      this.sentAt.set(`dm-${person.id}`, performance.now());
      this.channel.say(person, 'hello');
    }
    await done;
    const elapsed = performance.now() - started;
    // The fake keeps everything it was sent; drop it so memory figures measure hob.
    this.channel.chats.clear();
    this.channel.typingChats.length = 0;
    return elapsed;
  }
}

const people = (prefix: string, count: number): Person[] =>
  Array.from({ length: count }, (_, n) => ({ id: `${prefix}${n}`, name: `Person ${n}` }));

type Memory = { heap: number; rss: number };

function memory(): Memory {
  collectGarbage();
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, rss: usage.rss };
}

async function measureLatency(hob: TestGateway, clock: ReplyClock): Promise<string[]> {
  const summary: string[] = [];
  for (const [index, level] of LEVELS.entries()) {
    const group = people(`l${index}-`, level.conversations);
    await clock.round(group); // untimed: creates the conversations and warms the path
    await settle(hob);
    clock.latenciesMs.length = 0;
    let wallMs = 0;
    for (let round = 0; round < level.rounds; round++) wallMs += await clock.round(group);
    const samples = clock.latenciesMs;
    const messages = level.conversations * level.rounds;
    const perSecond = messages / (wallMs / 1000);
    const line =
      `gateway overhead at ${level.conversations.toLocaleString('en-US')} concurrent conversation${level.conversations === 1 ? '' : 's'}: ` +
      `median ${fmt(median(samples))} ms, p99 ${fmt(percentile(samples, 0.99))} ms ` +
      `(${messages.toLocaleString('en-US')} messages${level.conversations > 1 ? ` in bursts of ${level.conversations.toLocaleString('en-US')}` : ', one at a time'}; ${fmt(perSecond)} messages/s)`;
    console.log(line);
    if (level.conversations === 1 || level.conversations === 1_000) summary.push(line);
  }
  return summary;
}

/** Replies are timed when handed to send; the runs finish a few ticks later. */
async function settle(hob: TestGateway): Promise<void> {
  for (let i = 0; i < 1_000 && hob.gateway.pool.all().some((conversation) => conversation.busy); i++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function measureIdleMemory(hob: TestGateway, clock: ReplyClock): Promise<string> {
  const canGc = collectGarbage();
  const group = people('idle-', IDLE_CONVERSATIONS);
  await settle(hob);
  hob.gateway.pool.evictAll(); // start from no engines held, so "after" compares like with like
  const before = memory();
  await clock.round(group);
  await settle(hob);
  const live = memory();
  const evicted = hob.gateway.pool.evictAll();
  const after = memory();
  const perLive = { heap: (live.heap - before.heap) / IDLE_CONVERSATIONS, rss: (live.rss - before.rss) / IDLE_CONVERSATIONS };
  const perEvicted = { heap: (after.heap - before.heap) / IDLE_CONVERSATIONS, rss: (after.rss - before.rss) / IDLE_CONVERSATIONS };
  const note = canGc ? '' : ' [no --expose-gc: figures include garbage]';
  const line =
    `memory per idle conversation (${IDLE_CONVERSATIONS.toLocaleString('en-US')}, one exchange each): ` +
    `${fmtBytes(perLive.heap)} heap / ${fmtBytes(perLive.rss)} RSS while held; ` +
    `${fmtBytes(perEvicted.heap)} heap / ${fmtBytes(perEvicted.rss)} RSS after evicting ${evicted}${note}`;
  console.log(line);
  return line;
}

export async function run(): Promise<BenchResult> {
  const channel = new MemoryChannel();
  const everyone = [...LEVELS.flatMap((level, index) => people(`l${index}-`, level.conversations)), ...people('idle-', IDLE_CONVERSATIONS)];
  const hob = await startTestGateway(channel, new InstantModel(), {
    tools: [],
    access: new Map([[channel.platform, { allowFrom: everyone.map((person) => person.id), allowedGroups: [] }]]),
    maxConversations: everyone.length + 1,
  });
  try {
    const clock = new ReplyClock(channel);
    const summary = await measureLatency(hob, clock);
    summary.push(await measureIdleMemory(hob, clock));
    return { name: 'gateway', summary };
  } finally {
    await hob.close();
    rmSync(hob.dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, run);
