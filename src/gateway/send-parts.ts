import { PartialSendError, type SendOptions } from './channel.js';

/**
 * Sends a split message's `count` parts in order, from the first one an earlier attempt did
 * not deliver (`skipParts`); the last part always goes out (it carries the buttons, and the
 * ref names it). Each part but the last is reported as it lands, so a kill between parts
 * resends only the rest; a later part that fails throws PartialSendError. Resolves with what
 * sending the last part gave.
 */
export async function sendInParts<T>(count: number, options: SendOptions, sendPart: (index: number, isLast: boolean) => Promise<T>): Promise<T> {
  let last: T | undefined;
  for (let index = Math.min(options.skipParts ?? 0, count - 1); index < count; index++) {
    const isLast = index === count - 1;
    try {
      last = await sendPart(index, isLast);
    } catch (error) {
      throw index > 0 ? new PartialSendError(index, error) : error;
    }
    if (!isLast) options.onPartSent?.(index + 1);
  }
  return last as T;
}
