/**
 * The surroundings of a bot serving Telegram, Slack and Discord at once (bench/vs-floor.ts):
 * the three loopback fakes and the fake Anthropic answering every request at once, people
 * who write DMs, and what the benchmark reads back: when each channel came up, when each
 * answer arrived, and how many platform calls were made.
 */
import { Server } from 'node:http';
import { startFakeAnthropic, type FakeAnthropic } from '../test/fakes/anthropic.js';
import { startFakeDiscord, type FakeDiscord } from '../test/fakes/discord/index.js';
import { dmOf, startFakeSlack, type FakeSlack } from '../test/fakes/slack/index.js';
import { startFakeTelegram, type FakeTelegram } from '../test/fakes/telegram/index.js';
import { writeConfig } from '../test/support/hob-process.js';

export type Platform = 'telegram' | 'slack' | 'discord';
export const PLATFORMS: readonly Platform[] = ['telegram', 'slack', 'discord'];

const REPLY_TIMEOUT_MS = 20_000;
/** The stand-in model's whole answer, streamed in three deltas. */
export const ANSWER = 'Done.';

/** Person `index` on a platform: its user id there (what allow_from lists). */
export function personId(platform: Platform, index: number): string {
  return platform === 'slack' ? `U${1000 + index}` : String(1000 + index);
}

/**
 * Keeps a fake's idle keep-alive connections open for a minute instead of node's 5 s. In a
 * sitting of bench/vs-floor.ts each process's connections wait while the other process is
 * served; on a loaded machine that passed 5 s, and a client reusing a connection the server
 * was just closing got ECONNRESET (the floor, which does not retry, then lost that answer and
 * the sitting failed). The fakes keep their server to themselves: reached here, for the bench only.
 */
function keepIdleConnections(fake: object): void {
  const server = (fake as { server?: unknown }).server;
  if (server instanceof Server) server.keepAliveTimeout = IDLE_CONNECTION_MS;
}

const IDLE_CONNECTION_MS = 60_000;

export class ThreeChannels {
  /** performance.now() when each channel came up: first poll, socket connected, IDENTIFY. */
  readonly readyAt: Partial<Record<Platform, number>> = {};
  /** Called once per channel, the moment it comes up (bench/vs-floor.ts writes its first message then). */
  onReady: ((platform: Platform) => void) | undefined;
  private readonly waiting = new Map<string, () => void>();
  private readonly callCounts: Record<Platform, number> = { telegram: 0, slack: 0, discord: 0 };

  private constructor(
    readonly model: FakeAnthropic,
    readonly telegram: FakeTelegram,
    readonly slack: FakeSlack,
    readonly discord: FakeDiscord,
  ) {
    telegram.onCall = (call) => {
      const method = call.method.toLowerCase();
      if (method === 'getupdates') return this.up('telegram');
      this.callCounts.telegram += 1;
      if (method === 'sendmessage') this.answered('telegram', String(call.body.chat_id));
    };
    slack.socket.onConnection = () => this.up('slack');
    slack.web.onCall = (call) => {
      this.callCounts.slack += 1;
      if (call.method === 'chat.postMessage') this.answered('slack', String(call.params.channel));
    };
    discord.onCall = (call) => {
      this.callCounts.discord += 1;
      const posted = /^\/channels\/(\d+)\/messages$/.exec(call.path);
      if (call.method === 'POST' && posted) this.answered('discord', posted[1] as string);
    };
  }

  static async start(): Promise<ThreeChannels> {
    // The fake keeps no request bodies: over thousands of messages they would only fill this process.
    const model = await startFakeAnthropic({ apiKey: 'test', whenEmpty: { text: ANSWER, chunks: 3 }, keepRequests: 0 });
    const telegram = await startFakeTelegram({ botUsername: 'hob_bench_bot' });
    const slack = await startFakeSlack({ pingIntervalMs: 5_000 });
    const discord = await startFakeDiscord();
    for (const fake of [telegram, slack.web, discord]) keepIdleConnections(fake);
    return new ThreeChannels(model, telegram, slack, discord);
  }

  /** Resolves once every channel is up (the IDENTIFY is Discord's sign; it is polled). */
  async allReady(failed: Promise<never>): Promise<void> {
    const identified = this.discord.waitFor(() => {
      if (this.discord.gateway.identifies().length > 0) this.up('discord');
      return this.readyAt.telegram !== undefined && this.readyAt.slack !== undefined && this.readyAt.discord !== undefined;
    }, 60_000, 'all three channels up');
    await Promise.race([identified, failed]);
  }

  /**
   * Writes a `hob start` config in `dir` serving all three fakes, the terminal off, people
   * 0…people-1 allowed on each platform. Returns its path.
   */
  writeHobConfig(dir: string, people: number): string {
    const allow = (platform: Platform) => `[${Array.from({ length: people }, (_, index) => `"${personId(platform, index)}"`).join(', ')}]`;
    return writeConfig(
      dir,
      `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-bench, api_key: test, base_url: ${this.model.baseUrl}, retry: { max_attempts: 1 } }
channels:
  console: { enabled: false }
  telegram: { token: "${this.telegram.token}", api_root: ${this.telegram.apiRoot}, allow_from: ${allow('telegram')} }
  slack: { bot_token: ${this.slack.botToken}, app_token: ${this.slack.appToken}, api_url: "${this.slack.apiUrl}", allow_from: ${allow('slack')} }
  discord: { token: "${this.discord.token}", api_url: ${this.discord.apiRoot}, allow_from: ${allow('discord')} }
`,
    );
  }

  /** Platform calls made so far, without Telegram's long polls (the inbound side). */
  calls(platform: Platform): number {
    return this.callCounts[platform];
  }

  /**
   * Person `index` writes a DM on `platform`; resolves with the milliseconds until the answer
   * arrived at the platform (the first message the bot posts in that chat).
   */
  async message(platform: Platform, index: number, text: string): Promise<number> {
    const chat = this.chatOf(platform, index);
    const answered = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer on ${platform} to person ${index} within ${REPLY_TIMEOUT_MS} ms`)), REPLY_TIMEOUT_MS);
      this.waiting.set(`${platform}:${chat}`, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const started = performance.now();
    const id = personId(platform, index);
    switch (platform) {
      case 'telegram':
        this.telegram.sendText({ id: Number(id), first_name: `Person${index}` }, { id: Number(id), type: 'private' }, text);
        break;
      case 'slack':
        await this.slack.dm(this.slack.person({ id, name: `Person${index}` }), text);
        break;
      case 'discord':
        this.discord.dm({ id, name: `person${index}` }, text);
        break;
    }
    await answered;
    return performance.now() - started;
  }

  async close(): Promise<void> {
    await this.telegram.close();
    await this.slack.close().catch(() => undefined);
    await this.discord.close();
    await this.model.close();
  }

  private up(platform: Platform): void {
    if (this.readyAt[platform] !== undefined) return;
    this.readyAt[platform] = performance.now();
    this.onReady?.(platform);
  }

  private chatOf(platform: Platform, index: number): string {
    const id = personId(platform, index);
    switch (platform) {
      case 'telegram':
        return id;
      case 'slack':
        return dmOf(id);
      case 'discord':
        return this.discord.dmChannelOf({ id, name: `person${index}` });
    }
  }

  private answered(platform: Platform, chat: string): void {
    const key = `${platform}:${chat}`;
    const resolve = this.waiting.get(key);
    if (!resolve) return;
    this.waiting.delete(key);
    resolve();
  }
}
