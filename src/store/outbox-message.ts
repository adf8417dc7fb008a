/**
 * The one format of the message an outbox row holds: the message as JSON, a file's bytes in
 * base64. Every writer (the gateway's delivery, the scheduler, pairing) encodes with
 * `encodeOutboxMessage` and every reader decodes with `decodeOutboxMessage`; the repository
 * takes only an `EncodedMessage`, so JSON written by hand does not type-check.
 */

declare const encoded: unique symbol;

/** A message in the outbox's format; only `encodeOutboxMessage` makes one (and the rows read back). */
export type EncodedMessage = string & { readonly [encoded]: true };

/**
 * What the store needs to know of a message: its text and a file whose bytes go as base64.
 * The sender's other fields (the gateway's OutboundMessage: plain, buttons, replyTo) are
 * kept as they are.
 */
export type OutboxMessage = { text: string; plain?: boolean; file?: { name: string; data: Buffer; caption?: string } };

type Stored = Omit<OutboxMessage, 'file'> & { file?: { name: string; data: string; caption?: string } };

export function encodeOutboxMessage(message: OutboxMessage): EncodedMessage {
  const stored: Stored = { ...message, file: message.file ? { ...message.file, data: message.file.data.toString('base64') } : undefined };
  return JSON.stringify(stored) as EncodedMessage;
}

/** The message as it was encoded; `T` is the writer's own message type (the gateway's OutboundMessage). */
export function decodeOutboxMessage<T extends OutboxMessage = OutboxMessage>(json: EncodedMessage): T {
  const stored = JSON.parse(json) as Stored;
  return { ...stored, file: stored.file ? { ...stored.file, data: Buffer.from(stored.file.data, 'base64') } : undefined } as T;
}
