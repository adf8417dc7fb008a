import type { WebClient } from '@slack/web-api';
import type { FoundDelivery, OutboundMessage, SentRef, Target, UnconfirmedDelivery } from '../../src/gateway/channel.js';
import { splitMessage } from '../../src/gateway/format/split.js';
import { partKey } from '../../src/gateway/send-parts.js';
import { DELIVERY_EVENT, slackErrorCode, threadOf, type SlackOutbound } from './outbound.js';
import { MAX_MESSAGE_LENGTH } from './render.js';

/** How far before a cut-off send hob looks (Slack's clock and hob's may differ). */
const CLOCK_MARGIN_MS = 60_000;
/** Pages of 200 messages read per thread or channel at most. */
const MAX_PAGES = 5;

type HistoryMessage = { ts?: string; text?: string; bot_id?: string; metadata?: { event_type?: string; event_payload?: { key?: unknown } } };
type HistoryPage = { messages?: HistoryMessage[]; has_more?: boolean; response_metadata?: { next_cursor?: string } };

/**
 * What a crash (or a send with no answer) may have left in a Slack chat, found again: every
 * message hob posts carries its delivery key in `metadata`, and conversations.replies (a
 * thread) or conversations.history (the top of a DM) return it with `include_all_metadata`.
 * One look-up per thread, however many deliveries wait there. Files carry no metadata: a
 * file cut off by a crash is uploaded again. A stream carries none either (chat.startStream
 * takes none): in a thread, hob's message without metadata that begins with the text the
 * stream began with, and that no delivery recorded, is taken for it.
 */
export async function findDelivered(client: WebClient, botId: string | undefined, target: Target, deliveries: UnconfirmedDelivery[], known: ReadonlySet<string>): Promise<Map<string, FoundDelivery>> {
  const byThread = new Map<string, UnconfirmedDelivery[]>();
  for (const delivery of deliveries) {
    const thread = threadOf(target, delivery.message.replyTo) ?? '';
    byThread.set(thread, [...(byThread.get(thread) ?? []), delivery]);
  }
  const found = new Map<string, FoundDelivery>();
  for (const [thread, waiting] of byThread) {
    const since = Math.min(...waiting.map((delivery) => delivery.since)) - CLOCK_MARGIN_MS;
    const { keys, unkeyed } = await messagesIn(client, target.chatId, thread === '' ? undefined : thread, since);
    const streams = unkeyed.filter((message) => message.bot_id !== undefined && message.bot_id === botId && message.ts !== undefined && !known.has(message.ts));
    for (const delivery of waiting) {
      const parts = partCount(delivery.message);
      let partsSent = delivery.partsSent;
      let messageId: string | undefined;
      for (let ts = keys.get(partKey(delivery.key, partsSent)); ts !== undefined && partsSent < parts; ts = keys.get(partKey(delivery.key, partsSent))) {
        messageId = ts;
        partsSent += 1;
      }
      if (messageId === undefined && thread !== '' && delivery.partsSent === 0 && parts === 1) messageId = streamLike(streams, delivery.message.text);
      if (messageId !== undefined) found.set(delivery.key, { partsSent: Math.max(partsSent, 1), messageId, complete: Math.max(partsSent, 1) === parts });
    }
  }
  return found;
}

/** hob's stream in the thread that began with `preview` (the first one; each found once). */
function streamLike(streams: HistoryMessage[], preview: string): string | undefined {
  const head = preview.trim().slice(0, 40);
  if (head === '') return undefined;
  const index = streams.findIndex((message) => (message.text ?? '').trim().startsWith(head));
  if (index < 0) return undefined;
  return streams.splice(index, 1)[0]?.ts;
}

/** hob's messages in a thread or at the top of a channel since `since`: delivery keys → their ts, and those without a key. */
async function messagesIn(client: WebClient, channel: string, thread: string | undefined, since: number): Promise<{ keys: Map<string, string>; unkeyed: HistoryMessage[] }> {
  const keys = new Map<string, string>();
  const unkeyed: HistoryMessage[] = [];
  const oldest = (Math.max(0, since) / 1000).toFixed(6);
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = { channel, oldest, include_all_metadata: true, limit: 200, ...(cursor ? { cursor } : {}) };
    const result = (thread !== undefined ? await client.conversations.replies({ ...query, ts: thread }) : await client.conversations.history(query)) as HistoryPage;
    for (const message of result.messages ?? []) {
      const key = message.metadata?.event_type === DELIVERY_EVENT ? message.metadata.event_payload?.key : undefined;
      if (typeof key === 'string' && message.ts !== undefined) keys.set(key, message.ts);
      else if (message.ts !== thread && Number(message.ts) >= Number(oldest)) unkeyed.push(message);
    }
    cursor = result.response_metadata?.next_cursor;
    if (!result.has_more || !cursor) break;
  }
  unkeyed.sort((a, b) => Number(a.ts) - Number(b.ts));
  return { keys, unkeyed };
}

/** The parts `SlackOutbound.send` makes of a message (a file is one upload, found by no key). */
function partCount(message: OutboundMessage): number {
  if (message.file) return 1;
  return Math.max(1, splitMessage(message.text, MAX_MESSAGE_LENGTH).length);
}

/**
 * A live message a crash left: a stream is stopped first (Slack ends an abandoned stream only
 * after a while), then it is edited into its answer, or deleted. A message that is gone
 * counts as removed (false); other failures throw, so the gateway asks again later.
 */
export async function settleLive(client: WebClient, outbound: SlackOutbound, ref: SentRef, answer: OutboundMessage | undefined): Promise<boolean> {
  await client.chat.stopStream({ channel: ref.chatId, ts: ref.messageId }).catch(() => undefined);
  try {
    if (answer) {
      await outbound.edit(ref, answer);
      return true;
    }
    await outbound.remove(ref);
    return false;
  } catch (error) {
    if (slackErrorCode(error) === 'message_not_found') return false;
    throw error;
  }
}
