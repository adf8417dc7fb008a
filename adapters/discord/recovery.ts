import { DiscordAPIError, SnowflakeUtil } from 'discord.js';
import type { FoundDelivery, OutboundMessage, SentRef, Target, UnconfirmedDelivery } from '../../src/gateway/channel.js';
import { channelOf, chunksOf, fitted, type ApiMessage, type DiscordOutbound } from './outbound.js';

/**
 * How far before a cut-off send hob looks for its message: Discord's clock and hob's may
 * differ, and the message's snowflake carries Discord's time.
 */
const CLOCK_MARGIN_MS = 60_000;

/** Discord's "Unknown Message": the message is not there (deleted, or never made). */
const UNKNOWN_MESSAGE = 10008;

/**
 * What a crash (or a send with no answer) may have left in a Discord chat, found again.
 * Discord keeps a message's nonce only for a few minutes (a resend with the same nonce within
 * them returns the message that exists) and never shows it when messages are read back, so
 * after that hob recognises its own message by what it says: hob's messages in the channel
 * since the cut-off send, oldest first, none that another delivery recorded, each taken once.
 */
export async function findDelivered(
  outbound: DiscordOutbound,
  botId: string,
  target: Target,
  deliveries: UnconfirmedDelivery[],
  known: ReadonlySet<string>,
): Promise<Map<string, FoundDelivery>> {
  const found = new Map<string, FoundDelivery>();
  if (deliveries.length === 0) return found;
  const since = Math.min(...deliveries.map((delivery) => delivery.since)) - CLOCK_MARGIN_MS;
  const after = SnowflakeUtil.generate({ timestamp: Math.max(since, Number(SnowflakeUtil.epoch)) }).toString();
  const candidates = (await outbound.messagesAfter(channelOf(target), after)).filter((message) => message.author?.id === botId && !known.has(message.id));
  const taken = new Set<string>();
  for (const delivery of deliveries) {
    const parts = partsOf(delivery.message);
    let partsSent = delivery.partsSent;
    let messageId: string | undefined;
    while (partsSent < parts.length) {
      const wanted = parts[partsSent] as ExpectedPart;
      const match = candidates.find((message) => !taken.has(message.id) && looksLike(message, wanted));
      if (!match) break;
      taken.add(match.id);
      messageId = match.id;
      partsSent += 1;
    }
    if (messageId !== undefined) found.set(delivery.key, { partsSent, messageId, complete: partsSent === parts.length });
  }
  return found;
}

/**
 * A live message a crash left: edited into its answer, or deleted. A message that is gone
 * counts as removed (false); other failures throw, so the gateway asks again later.
 */
export async function settleLive(outbound: DiscordOutbound, ref: SentRef, answer: OutboundMessage | undefined): Promise<boolean> {
  try {
    if (answer) {
      await outbound.patch(channelOf(ref), ref.messageId, fitted(answer.text, answer.plain === true), answer.buttons ?? []);
      return true;
    }
    await outbound.remove(channelOf(ref), ref.messageId);
    return false;
  } catch (error) {
    if (error instanceof DiscordAPIError && error.code === UNKNOWN_MESSAGE) return false;
    throw error;
  }
}

type ExpectedPart = { content: string; file?: string };

/** The parts `DiscordOutbound.send` makes of a message, as Discord shows them. */
function partsOf(message: OutboundMessage): ExpectedPart[] {
  const text = message.file && message.text.trim() === '' ? (message.file.caption ?? '') : message.text;
  const chunks = chunksOf(text, message.plain === true);
  const contents = chunks.length === 0 ? [''] : chunks;
  return contents.map((content, index) => ({ content, ...(index === contents.length - 1 && message.file ? { file: message.file.name } : {}) }));
}

function looksLike(message: ApiMessage, wanted: ExpectedPart): boolean {
  if ((message.content ?? '') !== wanted.content) return false;
  const files = (message.attachments ?? []).map((attachment) => attachment.filename);
  return wanted.file === undefined ? files.length === 0 : files.includes(wanted.file);
}
