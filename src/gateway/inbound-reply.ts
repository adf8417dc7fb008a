/**
 * Where the gateway answers an inbound message itself (a command's reply, a refusal): in the
 * message's chat and thread, through the outbox — or to the sender alone, when the platform
 * gave the message a private way to answer (an ephemeral reply to a slash command).
 */
import type { InboundMessage, Target } from './channel.js';
import type { Delivery } from './delivery.js';

/** Where a message came from, as a target to answer in (its thread, when it has one). */
export function targetOf(where: { chatId: string; threadId?: string }): Target {
  return { chatId: where.chatId, ...(where.threadId ? { threadId: where.threadId } : {}) };
}

/** A short plain answer to the message: privately when it offers that, else in its chat. */
export async function replyTo(delivery: Delivery, message: InboundMessage, text: string): Promise<void> {
  if (message.respond) return message.respond(text);
  await delivery.send(message.platform, targetOf(message), { text, plain: true });
}
