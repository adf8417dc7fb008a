/**
 * Several `hob start` processes serving one Slack app (issue 23): each its own data_dir and
 * Socket Mode connection, all on one store (a PostgreSQL URL, or, for one process, SQLite);
 * Telegram in webhook mode and Discord shards beside it, or Discord alone.
 * The model answers each message with "answer <token>", the token (`c7-m2`) taken from the
 * person's last message, so a test reads which message each answer is for.
 */
import { createServer, type AddressInfo } from 'node:net';
import type { AnthropicRequestBody, AnthropicScript, FakeAnthropic } from '../fakes/anthropic.js';
import { dmOf, type FakeSlack, type SlackPerson } from '../fakes/slack/index.js';
import { tempDir } from './engine.js';
import { cleanEnv, spawnHob, writeConfig, type HobProcess } from './hob-process.js';

export type HobNode = HobProcess & { dir: string; label?: string };

export type HobClusterOptions = {
  model: FakeAnthropic;
  /** The Slack app every process serves; without it the processes serve only the channels below. */
  slack?: FakeSlack;
  /** Who may talk to hob on Slack. */
  people?: SlackPerson[];
  /** Slack channels hob answers in (allowed_channels); none without it. */
  slackChannels?: string[];
  /** This process's own Slack app token (FakeSlack.appTokenFor): `slack.socket.deliverOn = label` sends envelopes to it. */
  label?: string;
  /** A PostgreSQL URL; without it each process has its own SQLite file (use one process then). */
  url?: string;
  leaseMs?: number;
  /** Telegram in webhook mode too: this process's webhook listens on `port` (the fake's balancer posts to it). */
  telegram?: { token: string; apiRoot: string; port: number; allow: string[] };
  /** Discord too: this process runs gateway shards `ids` of `count` (the fake routes events by shard). */
  discord?: { token: string; apiRoot: string; allow: string[]; shards: { ids: number[]; count: number } };
};

/**
 * The Slack app's edits are not what these runs measure: Slack's Tier 3 limit on chat.update
 * (50 a minute for the whole workspace, shared by every process) would hold answers back a minute.
 */
export function liftEditLimit(slack: FakeSlack): void {
  slack.web.updatesPerMinute = 10_000;
}

/** Starts one more process and waits until its channels are up (Discord's, when it has one; Slack's otherwise). */
export async function startNode(options: HobClusterOptions): Promise<HobNode> {
  const dir = tempDir('hob-cluster-');
  const { model, slack } = options;
  const store = options.url ? `store: { kind: postgres, url: "${options.url}" }\ncluster: { lease_ms: ${options.leaseMs ?? 15_000} }\n` : '';
  const config = writeConfig(
    dir,
    `data_dir: ${dir}/data
${store}model: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${model.baseUrl}, retry: { max_attempts: 3, base_delay_ms: 100 } }
channels:
  console: { enabled: false }
${slackSection(slack, options.people ?? [], options.label, options.slackChannels ?? [])}${telegramSection(options.telegram)}${discordSection(options.discord)}`,
  );
  const hob = spawnHob(['--config', config, 'start'], cleanEnv());
  await hob.waitFor(options.discord ? /hob is running on .*discord/ : /hob is running on .*slack/, 30_000);
  return Object.assign(hob, { dir, label: options.label });
}

function slackSection(slack: FakeSlack | undefined, allowed: SlackPerson[], label: string | undefined, channels: string[]): string {
  if (!slack) return '';
  const inChannels = channels.length ? `, allowed_channels: [${channels.map((id) => `"${id}"`).join(', ')}]` : '';
  return `  slack: { bot_token: ${slack.botToken}, app_token: ${label ? slack.appTokenFor(label) : slack.appToken}, api_url: "${slack.apiUrl}", allow_from: [${allowed.map((person) => `"${person.id}"`).join(', ')}]${inChannels} }\n`;
}

function telegramSection(telegram: HobClusterOptions['telegram']): string {
  if (!telegram) return '';
  const allow = telegram.allow.map((id) => `"${id}"`).join(', ');
  return `  telegram: { token: "${telegram.token}", api_root: ${telegram.apiRoot}, allow_from: [${allow}], webhook: { url: "https://hob.example.com/telegram", secret_token: team-secret, port: ${telegram.port} } }\n`;
}

function discordSection(discord: HobClusterOptions['discord']): string {
  if (!discord) return '';
  const allow = discord.allow.map((id) => `"${id}"`).join(', ');
  return `  discord: { token: "${discord.token}", api_url: ${discord.apiRoot}, allow_from: [${allow}], shards: { ids: [${discord.shards.ids.join(', ')}], count: ${discord.shards.count} } }\n`;
}

/** A port free on 127.0.0.1 now (for a process's webhook). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The message token an answer is for, from the last thing the person said. */
export function lastToken(body: AnthropicRequestBody): string | undefined {
  const user = body.messages.filter((message) => message.role === 'user').at(-1);
  const text = typeof user?.content === 'string' ? user.content : (user?.content ?? []).map((block) => (typeof block.text === 'string' ? block.text : '')).join(' ');
  return text.match(/c\d+-m\d+/g)?.at(-1);
}

/** The model answers "answer <token>"; `slow` decides a delay per token (the run is in flight meanwhile). */
export function answerTokens(model: FakeAnthropic, slow: (token: string) => number = () => 0): void {
  model.respondWith((request): AnthropicScript => {
    const token = lastToken(request.body) ?? 'none';
    const delayMs = slow(token);
    return { text: `answer ${token}`, ...(delayMs ? { delayMs } : {}) };
  });
}

export function people(count: number, prefix = 'U'): SlackPerson[] {
  return Array.from({ length: count }, (_, index) => ({ id: `${prefix}${String(index).padStart(4, '0')}`, name: `Person ${index}` }));
}

/** What a person's DM shows from hob, as answer tokens in order. */
export function answersIn(slack: FakeSlack, person: SlackPerson): string[] {
  return slack.seen(dmOf(person.id)).map((message) => message.text.replace(/^answer /, ''));
}

/** Sends `c<i>-m<n>` to the person's DM and waits for its answer there. */
export async function exchange(slack: FakeSlack, person: SlackPerson, token: string, timeoutMs = 20_000): Promise<void> {
  await slack.dm(person, `please answer ${token}`);
  await slack.waitFor(() => answersIn(slack, person).includes(token), timeoutMs, `the answer to ${token}`);
}
