/**
 * Delivery: how many platform calls one answer costs on Slack, Discord and Telegram (a short
 * answer, a long one sent in parts, and one the model writes over about two seconds), each
 * through the real adapter, the gateway and the loopback fake; and what the look-up after a
 * restart costs when 100 deliveries were cut off (sent, but never marked): the calls, the
 * time, and how many were sent again (none should be).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createDiscordAdapter } from '../adapters/discord/discord-adapter.js';
import { createTelegramAdapter } from '../adapters/telegram/telegram-adapter.js';
import { systemClock } from '../src/core/clock.js';
import { emptyUsage, type Message } from '../src/core/messages.js';
import type { ChannelAdapter, OutboundMessage, Target } from '../src/gateway/channel.js';
import { Delivery } from '../src/gateway/delivery.js';
import { deliveryKey } from '../src/gateway/delivery-recovery.js';
import { createLogger } from '../src/logger.js';
import type { ProviderClient, ProviderEvent } from '../src/providers/types.js';
import { openDatabase } from '../src/store/sqlite/db.js';
import { SqliteOutbox } from '../src/store/sqlite/outbox.js';
import { encodeOutboxMessage } from '../src/store/outbox-message.js';
import { startFakeDiscord, type FakeDiscord } from '../test/fakes/discord/index.js';
import { startFakeSlack, type FakeSlack } from '../test/fakes/slack/index.js';
import { dmOf } from '../test/fakes/slack/web-api.js';
import { startFakeTelegram } from '../test/fakes/telegram/index.js';
import { tempDir } from '../test/support/engine.js';
import { startTestGateway, type TestGateway } from '../test/support/gateway.js';
import { slackAdapter } from '../test/support/slack-testbed.js';
import { fmt, runIfMain, type BenchResult } from './stats.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const PERSON = { id: '100', name: 'Ann' };

/** Writes `text` in `pieces` deltas, `gapMs` apart. */
class PacedModel implements ProviderClient {
  readonly provider = 'paced';
  readonly model = 'paced-model';
  next: { text: string; pieces: number; gapMs: number } = { text: 'Done.', pieces: 1, gapMs: 0 };

  async *stream(): AsyncIterable<ProviderEvent> {
    const { text, pieces, gapMs } = this.next;
    const size = Math.ceil(text.length / pieces);
    for (let at = 0; at < text.length; at += size) {
      if (at > 0 && gapMs) await new Promise((resolve) => setTimeout(resolve, gapMs));
      yield { type: 'text_delta', text: text.slice(at, at + size) };
    }
    const message: Message = { role: 'assistant', content: [{ type: 'text', text }] };
    yield { type: 'done', message, stopReason: 'end_turn', usage: { ...emptyUsage(), inputTokens: 10, outputTokens: 10 }, model: this.model };
  }
}

type Kind = { name: string; text: (limit: number) => string; pieces: number; gapMs: number };
const KINDS: Kind[] = [
  { name: 'short', text: () => 'Done: the report is in your workspace.', pieces: 1, gapMs: 0 },
  { name: 'long (3 parts)', text: (limit) => Array.from({ length: 3 }, (_, n) => `Part ${n}: ${'steady words '.repeat(Math.floor((limit - 40) / 13))}`.trim()).join('\n\n'), pieces: 20, gapMs: 0 },
  { name: 'streamed (2 s)', text: () => Array.from({ length: 40 }, (_, n) => `word${n}`).join(' '), pieces: 10, gapMs: 200 },
];

type Platform = {
  name: string;
  adapter: ChannelAdapter;
  limit: number;
  /** Every call the fake has seen so far, as `method` names. */
  calls(): string[];
  ask(text: string): void;
  close(): Promise<void>;
};

async function slackPlatform(): Promise<Platform> {
  const fake = await startFakeSlack({ pingIntervalMs: 5000 });
  const person = fake.person({ id: PERSON.id, name: PERSON.name });
  return {
    name: 'Slack', adapter: slackAdapter(fake), limit: 3000,
    calls: () => fake.web.calls.map((call) => call.method),
    ask: (text) => void fake.dm(person, text),
    close: () => fake.close(),
  };
}

async function discordPlatform(): Promise<Platform> {
  const fake = await startFakeDiscord();
  return {
    name: 'Discord', adapter: createDiscordAdapter({ token: fake.token, apiUrl: fake.apiRoot, logger: quiet }), limit: 2000,
    calls: () => fake.calls.map((call) => `${call.method} ${call.path.replace(/\d{6,}/g, ':id')}`),
    ask: (text) => void fake.dm(PERSON, text),
    close: () => fake.close(),
  };
}

async function telegramPlatform(): Promise<Platform> {
  const fake = await startFakeTelegram({ botUsername: 'hob_bot' });
  return {
    name: 'Telegram', adapter: createTelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot, logger: quiet }), limit: 4096,
    calls: () => fake.calls.map((call) => call.method),
    ask: (text) => void fake.sendText({ id: Number(PERSON.id), first_name: PERSON.name }, { id: Number(PERSON.id), type: 'private' }, text),
    close: () => fake.close(),
  };
}

/** Waits until the answer is out: no run busy, nothing pending or live in the outbox. */
async function settled(hob: TestGateway): Promise<void> {
  const outbox = new SqliteOutbox(hob.db);
  for (let waited = 0; waited < 30_000; waited += 20) {
    const counts = outbox.counts();
    if (counts.sent > 0 && counts.pending === 0 && counts.live === 0 && !hob.gateway.pool.all().some((conversation) => conversation.busy)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the answer did not settle');
}

async function callsPerAnswer(make: () => Promise<Platform>): Promise<string> {
  const counts: string[] = [];
  for (const kind of KINDS) {
    const platform = await make();
    const model = new PacedModel();
    const hob = await startTestGateway(platform.adapter, model, { tools: [], access: new Map([[platform.adapter.platform, { allowFrom: [PERSON.id], allowedGroups: [] }]]) });
    try {
      model.next = { text: kind.text(platform.limit), pieces: kind.pieces, gapMs: kind.gapMs };
      const before = platform.calls().length;
      platform.ask('please');
      await settled(hob);
      // The busy indicator's last call (a reaction removed) may trail the answer a little.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const made = platform.calls().slice(before);
      const byMethod = new Map<string, number>();
      for (const method of made) byMethod.set(method, (byMethod.get(method) ?? 0) + 1);
      counts.push(`${kind.name} ${made.length} (${[...byMethod].map(([method, n]) => `${method} ×${n}`).join(', ')})`);
    } finally {
      await hob.close();
      await platform.close();
      rmSync(hob.dir, { recursive: true, force: true });
    }
  }
  const line = `platform calls per answer on ${(await make().then(async (platform) => (await platform.close(), platform.name)))}: ${counts.join('; ')}`;
  console.log(line);
  return line;
}

const ROWS = 100;
const CHATS = 10;

/**
 * 100 deliveries the platform took but hob never marked (as a crash leaves them), in 10
 * chats; a new Delivery on the same database (as the next start) settles them.
 */
async function recoveryCost(name: string, fakeCalls: () => number, fakeMessages: () => number, adapter: ChannelAdapter, chatOf: (index: number) => Target, close: () => Promise<void>): Promise<string> {
  const dir = tempDir('hob-bench-recovery-');
  const db = openDatabase(join(dir, 'hob.db'));
  const outbox = new SqliteOutbox(db);
  const silent = createLogger({ level: 'silent', destination: 'silent' });
  try {
    for (let index = 0; index < ROWS; index++) {
      const target = chatOf(index % CHATS);
      const message: OutboundMessage = { text: `Delivery number ${index}, cut off by a crash.` };
      const now = Date.now();
      const id = outbox.add({ platform: adapter.platform, chatId: target.chatId, message: encodeOutboxMessage(message), now, leaseUntil: now + 120_000 });
      await adapter.send(target, message, { deliveryKey: deliveryKey(id, now) });
    }
    // The setup's 100 sends spent discord.js's global allowance (50 a second): let it refill, so
    // the look-up is what is timed.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const messagesBefore = fakeMessages();
    const callsBefore = fakeCalls();
    const delivery = new Delivery(outbox, systemClock, silent);
    delivery.register(adapter);
    const started = performance.now();
    delivery.releaseLeases();
    // A pass takes 50 rows: as many passes as it takes (the worker runs one a second).
    for (let pass = 0; pass < 10 && outbox.counts().pending > 0; pass++) await delivery.flush();
    const ms = performance.now() - started;
    const sent = outbox.counts().sent;
    const line = `recovery look-up after a restart on ${name}, ${ROWS} unconfirmed rows in ${CHATS} chats: ${fmt(ms)} ms, ${fakeCalls() - callsBefore} platform calls, ${sent} found delivered, ${fakeMessages() - messagesBefore} sent again`;
    console.log(line);
    return line;
  } finally {
    await close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function slackRecovery(): Promise<string> {
  const fake: FakeSlack = await startFakeSlack({ pingIntervalMs: 5000 });
  const adapter = slackAdapter(fake);
  return recoveryCost('Slack', () => fake.web.calls.length, () => fake.web.messages.length, adapter, (index) => ({ chatId: dmOf(`U${index}`) }), () => fake.close());
}

async function discordRecovery(): Promise<string> {
  const fake: FakeDiscord = await startFakeDiscord();
  // Setting up sends 100 messages; Discord's 5-per-5-s bucket would only slow the setup down.
  fake.buckets.limit = Number.MAX_SAFE_INTEGER;
  const adapter = createDiscordAdapter({ token: fake.token, apiUrl: fake.apiRoot, logger: quiet });
  return recoveryCost('Discord', () => fake.calls.length, () => fake.messages.length, adapter, (index) => ({ chatId: fake.dmChannelOf({ id: String(700 + index), name: `P${index}` }) }), async () => {
    await adapter.stop();
    await fake.close();
  });
}

export async function run(): Promise<BenchResult> {
  const summary: string[] = [];
  for (const make of [slackPlatform, discordPlatform, telegramPlatform]) summary.push(await callsPerAnswer(make));
  summary.push(await slackRecovery());
  summary.push(await discordRecovery());
  return { name: 'delivery', summary };
}

runIfMain(import.meta.url, run);
