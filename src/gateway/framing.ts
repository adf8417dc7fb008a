/**
 * How a message that is not simply "the next thing said" reaches the model: an edit of an
 * earlier message, or a reply to an older one, is framed so the model knows which it is.
 * (Text steered in mid-run is framed by the engine: `frameSteered`.)
 */
import type { InboundMessage } from './channel.js';

const QUOTE_CHARS = 200;

export function framedText(message: InboundMessage): string {
  const frames: string[] = [];
  if (message.editedAfterSeconds !== undefined) frames.push('[Edited: this replaces what they wrote before; answer the corrected version]');
  if (message.quoted && message.quoted.text.trim()) {
    const quote = message.quoted.text.replace(/\s+/g, ' ').trim();
    const clipped = quote.length > QUOTE_CHARS ? `${quote.slice(0, QUOTE_CHARS - 1)}…` : quote;
    frames.push(`[Replying to ${message.quoted.fromBot ? 'your earlier message' : 'an earlier message'}: "${clipped}"]`);
  }
  return frames.length ? `${frames.join(' ')} ${message.text}` : message.text;
}
