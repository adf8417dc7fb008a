import type { ChannelCapabilities } from '../../src/gateway/channel.js';

/**
 * What Telegram allows, without its SDK: `hob start` reads these while grammy still loads
 * (src/gateway/deferred-adapter.ts).
 */

/** Telegram's limits, in UTF-16 units of the text a person reads. */
export const MAX_MESSAGE_LENGTH = 4096;

export const TELEGRAM_CAPABILITIES: ChannelCapabilities = Object.freeze({
  maxMessageLength: MAX_MESSAGE_LENGTH,
  buttons: true,
  edits: true,
  files: true,
  // Telegram allows about one message per second per chat before it answers 429.
  editIntervalMs: 1000,
  // In groups about 20 messages (edits included) a minute.
  groupEditIntervalMs: 3000,
  // Answers appear as drafts in DMs (sendMessageDraft); groups keep progress edits.
  streaming: 'draft',
  // A spoken answer is a voice message (sendVoice, Ogg/Opus).
  spokenAnswers: 'voice_message',
});

/** The most commands one Telegram menu takes (setMyCommands). */
export const MAX_COMMANDS = 100;
