import type { ChannelCapabilities } from '../../src/gateway/channel.js';

/**
 * What Discord allows, without discord.js: `hob start` reads these while the SDK still loads
 * (src/gateway/deferred-adapter.ts).
 */

/** Discord's limit for a message's content, in UTF-16 units. */
export const MAX_MESSAGE_LENGTH = 2000;

/**
 * Discord allows about five edits of messages in a channel per five seconds; one edit a
 * second and a bit leaves room for the progress message and the typing indicator.
 */
export const LIVE_EDIT_INTERVAL_MS = 1200;

export const DISCORD_CAPABILITIES: ChannelCapabilities = Object.freeze({
  maxMessageLength: MAX_MESSAGE_LENGTH,
  buttons: true,
  edits: true,
  files: true,
  editIntervalMs: LIVE_EDIT_INTERVAL_MS,
  streaming: 'edit',
  // A spoken answer is an audio file, which Discord plays inline (a voice message would need its waveform).
  spokenAnswers: 'audio_file',
});

/** Discord's limit of chat-input commands per application (and per guild). */
export const MAX_COMMANDS = 100;
