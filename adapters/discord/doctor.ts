import type { Check } from '../../src/core/check.js';
import { errorMessage } from '../../src/core/errors.js';
import type { ChannelDoctorContext } from '../../src/gateway/channel-module.js';

/** GATEWAY_MESSAGE_CONTENT (verified apps) and GATEWAY_MESSAGE_CONTENT_LIMITED (the rest). */
const MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19);
const API_VERSION = 'v10';
/** View Channels, Send Messages, Send Messages in Threads, Attach Files, Read Message History. */
const DISCORD_PERMISSIONS = String((1n << 10n) | (1n << 11n) | (1n << 38n) | (1n << 15n) | (1n << 16n));

function inviteUrl(applicationId: string): string {
  return `https://discord.com/oauth2/authorize?client_id=${applicationId}&scope=bot+applications.commands&permissions=${DISCORD_PERMISSIONS}`;
}

/**
 * `hob doctor` for Discord: the token names a bot (`GET /users/@me`), and the application
 * has the Message Content intent switched on (`GET /applications/@me` flags); without it
 * Discord closes hob's connection with 4014.
 */
export async function checkDiscord(apiUrl: string, token: string, context: ChannelDoctorContext, shards?: { ids: number[]; count: number }): Promise<Check[]> {
  const call = async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await context.fetch(`${apiUrl}/${API_VERSION}${path}`, { headers: { authorization: `Bot ${token}` }, signal: AbortSignal.timeout(10_000) });
    return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
  };
  let me: Awaited<ReturnType<typeof call>>;
  try {
    me = await call('/users/@me');
  } catch (error) {
    return [{ name: 'discord', ok: false, detail: `${apiUrl} unreachable: ${errorMessage(error)}; check channels.discord.api_url` }];
  }
  if (me.status !== 200) {
    return [{ name: 'discord', ok: false, detail: `GET /users/@me answered ${me.status}; copy a new token from the Developer Portal (your application → Bot → Reset Token) into channels.discord.token` }];
  }
  const checks: Check[] = [{ name: 'discord', ok: true, detail: `token ${context.mask(token)} is ${String(me.body.username)} (id ${String(me.body.id)})` }];
  try {
    const app = await call('/applications/@me');
    const flags = Number(app.body.flags ?? 0);
    if (app.status === 200) checks.push({ name: 'discord invite', ok: true, detail: inviteUrl(String(app.body.id)) });
    checks.push(
      app.status === 200 && (flags & MESSAGE_CONTENT_FLAGS) !== 0
        ? { name: 'discord intents', ok: true, detail: 'Message Content intent is on' }
        : { name: 'discord intents', ok: false, detail: app.status === 200 ? 'Message Content intent is off: enable Message Content Intent in the Developer Portal (your application → Bot → Privileged Gateway Intents)' : `GET /applications/@me answered ${app.status}` },
    );
  } catch (error) {
    checks.push({ name: 'discord intents', ok: false, detail: `could not read the application: ${errorMessage(error)}` });
  }
  if (shards) checks.push(await shardCheck(shards, () => call('/gateway/bot')));
  return checks;
}

/** Discord refuses a shard that carries more than 2,500 servers (close 4011); it recommends one per 1,000. */
async function shardCheck(shards: { ids: number[]; count: number }, gatewayBot: () => Promise<{ status: number; body: Record<string, unknown> }>): Promise<Check> {
  const runs = `this process runs shard${shards.ids.length > 1 ? 's' : ''} ${shards.ids.join(', ')} of ${shards.count}; the other processes must run the rest, each once`;
  try {
    const answer = await gatewayBot();
    const recommended = Number(answer.body.shards);
    if (answer.status !== 200 || !Number.isInteger(recommended)) return { name: 'discord shards', ok: true, detail: `${runs} (GET /gateway/bot answered ${answer.status})` };
    if (recommended > shards.count) {
      return { name: 'discord shards', ok: false, detail: `${runs}, but Discord recommends ${recommended} shards for this bot: set channels.discord.shards.count to ${recommended} in every process and split the ids 0-${recommended - 1} among them` };
    }
    return { name: 'discord shards', ok: true, detail: `${runs} (Discord recommends ${recommended})` };
  } catch (error) {
    return { name: 'discord shards', ok: true, detail: `${runs} (could not ask Discord for its recommendation: ${errorMessage(error)})` };
  }
}
