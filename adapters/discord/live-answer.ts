import type { LiveAnswer, LiveAnswerOptions, Target } from '../../src/gateway/channel.js';
import { EditedLiveAnswer } from '../../src/gateway/edited-live-answer.js';
import { LIVE_EDIT_INTERVAL_MS } from './capabilities.js';
import { channelOf, describeError, fitted, type DiscordLogger, type DiscordOutbound } from './outbound.js';

export { LIVE_EDIT_INTERVAL_MS };

/**
 * The live message's nonce: its own, not the answer's first part's. A live message that
 * cannot become the answer is deleted and the gateway sends the answer under the delivery key;
 * had both carried one nonce, Discord could answer that send with the deleted message (what
 * it does with the nonce of a deleted message is not documented), and the answer would be
 * missing. A resend of the live message itself (discord.js retrying the POST) still finds it.
 */
export function liveNonce(key: string): string {
  return `${key}.live`;
}

/**
 * An answer shown while it is written, Discord style: one message, posted with the first
 * text and edited as more arrives (while the text is longer than one message, it shows the
 * first 2,000 characters); it becomes the answer's first part, and the gateway sends the
 * other parts after it.
 */
export function discordLiveAnswer(outbound: DiscordOutbound, target: Target, options: LiveAnswerOptions, logger: DiscordLogger, intervalMs = LIVE_EDIT_INTERVAL_MS): LiveAnswer {
  const where = { chatId: target.chatId, ...(target.threadId !== undefined ? { threadId: target.threadId } : {}) };
  return new EditedLiveAnswer(
    {
      post: async (text, key) => {
        const reply = options.chatType !== 'dm' && options.replyTo !== undefined ? { replyTo: options.replyTo } : {};
        const posted = await outbound.post(channelOf(target), { content: text, ...reply, ...(key !== undefined ? { nonce: liveNonce(key) } : {}) });
        return { ...where, messageId: posted.id };
      },
      edit: (ref, text) => outbound.patch(channelOf(ref), ref.messageId, text, []),
      remove: (ref) => outbound.remove(channelOf(ref), ref.messageId),
      fit: (text) => fitted(text, false),
      warn: (message, error) => logger.warn({ chat: target.chatId, ...describeError(error) }, `discord: ${message}`),
    },
    options,
    intervalMs,
  );
}
