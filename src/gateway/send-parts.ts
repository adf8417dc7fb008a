import { PartialSendError, type SendOptions } from './channel.js';

/**
 * Sends a split message's `count` parts in order, from the first one an earlier attempt did
 * not deliver (`skipParts`); the last part always goes out (it carries the buttons, and the
 * ref names it). Each part is reported the moment it lands (`onPartSent`, with its id from
 * `idOf`), so a kill between parts resends only the rest; a later part that fails throws
 * PartialSendError. Resolves with what sending the last part gave.
 */
export async function sendInParts<T>(count: number, options: SendOptions, sendPart: (index: number, isLast: boolean) => Promise<T>, idOf: (sent: T) => string): Promise<T> {
  let last: T | undefined;
  for (let index = Math.min(options.skipParts ?? 0, count - 1); index < count; index++) {
    const isLast = index === count - 1;
    try {
      last = await sendPart(index, isLast);
    } catch (error) {
      throw index > 0 ? new PartialSendError(index, error) : error;
    }
    options.onPartSent?.(index + 1, idOf(last), isLast);
  }
  return last as T;
}

/** The key one part of a delivery carries to the platform (a message nonce, message metadata): at most 25 characters. */
export function partKey(deliveryKey: string, part: number): string {
  return `${deliveryKey}.${part}`;
}
