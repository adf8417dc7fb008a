/**
 * How hob's messages land in a web chat so that none shows twice: every part of a delivery is
 * stored under its key (`<delivery key>.<part>`), a send repeated with the same key returns
 * what is stored, and after a crash the gateway's look-ups are answered from web.db exactly
 * (no guessing by text, as a platform's history would need). Live messages are stored under
 * their key too (see LiveMessages).
 */
import type { FoundDelivery, OutboundMessage, SendOptions, SentRef, Target, UnconfirmedDelivery } from '../../src/gateway/channel.js';
import { splitMessage } from '../../src/gateway/format/split.js';
import { partKey, sendInParts } from '../../src/gateway/send-parts.js';
import { MAX_MESSAGE_LENGTH } from './capabilities.js';
import type { ChatLog, ChatMessage } from './chat-log.js';


/** Stores a message and shows it on the chat's open pages (a repeated one replaces itself there). */
export type Post = (stored: ChatMessage) => SentRef;

/** The texts a message is stored as: one per part, a file's message is one part. */
function textsOf(message: OutboundMessage): string[] {
  if (message.file) return [message.text.trim() === '' ? (message.file.caption ?? '') : message.text];
  const parts = splitMessage(message.text, MAX_MESSAGE_LENGTH);
  return parts.length ? parts : [message.text];
}

export async function sendStored(chat: ChatLog, post: Post, target: Target, message: OutboundMessage, options: SendOptions): Promise<SentRef> {
  const plain = message.plain ?? false;
  const buttons = message.buttons ?? [];
  const keyOf = (part: number) => (options.deliveryKey === undefined ? undefined : partKey(options.deliveryKey, part));
  const texts = textsOf(message);
  if (message.file) {
    const deliveryKey = keyOf(0);
    const earlier = deliveryKey === undefined ? undefined : chat.byKey(target.chatId, deliveryKey);
    if (earlier) return { ...post(earlier), isFile: true };
    const file = await chat.saveFile(target.chatId, { name: message.file.name, mime: 'application/octet-stream', data: message.file.data, uploaded: false });
    const stored = chat.addBot(target.chatId, { text: texts[0] as string, plain, buttons, fileId: file.id, ...(deliveryKey ? { deliveryKey } : {}) });
    return { ...post(stored.message), isFile: true };
  }
  return sendInParts(
    texts.length,
    options,
    async (index, isLast) => {
      const deliveryKey = keyOf(index);
      const stored = chat.addBot(target.chatId, { text: texts[index] as string, plain, buttons: isLast ? buttons : [], ...(deliveryKey ? { deliveryKey } : {}) });
      return post(stored.message);
    },
    (ref) => ref.messageId,
  );
}

/** Which cut-off deliveries are stored in this chat, and how many of their parts (in order from the first). */
export function findStored(chat: ChatLog, target: Target, deliveries: UnconfirmedDelivery[]): Map<string, FoundDelivery> {
  const found = new Map<string, FoundDelivery>();
  for (const delivery of deliveries) {
    const parts = textsOf(delivery.message).length;
    let partsSent = 0;
    let messageId: string | undefined;
    for (; partsSent < parts; partsSent++) {
      const stored = chat.byKey(target.chatId, partKey(delivery.key, partsSent));
      // A live message under the key is not this delivery yet: sending it makes it so.
      if (!stored || stored.live) break;
      messageId = String(stored.id);
    }
    if (messageId !== undefined) found.set(delivery.key, { partsSent, messageId, complete: partsSent === parts });
  }
  return found;
}

/**
 * A live message a crash left: it becomes its answer, or without one it is removed. One that
 * is gone (pruned) counts as removed, and the gateway sends the answer the ordinary way.
 */
export function settleStored(chat: ChatLog, post: Post, drop: (chatId: string, id: string) => void, ref: SentRef, answer: OutboundMessage | undefined): boolean {
  const id = Number(ref.messageId);
  if (!Number.isSafeInteger(id)) return false;
  if (!answer) {
    if (chat.removeLive(ref.chatId, id)) drop(ref.chatId, ref.messageId);
    return false;
  }
  const stored = chat.update(ref.chatId, id, { text: answer.text, plain: answer.plain ?? false, buttons: answer.buttons ?? [] });
  if (stored) post(stored);
  return stored !== undefined;
}
