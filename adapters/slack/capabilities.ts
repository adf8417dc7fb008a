import type { ChannelCapabilities } from '../../src/gateway/channel.js';

/**
 * What Slack allows, without Bolt: `hob start` reads these while the SDK still loads
 * (src/gateway/deferred-adapter.ts).
 */

/**
 * Slack's limits, in characters of the text a person reads: a section's text and a message's
 * notification text are best kept under 3000 (a markdown block holds 12,000 in all, but a
 * part that fits a section also fits every fallback).
 */
export const MAX_MESSAGE_LENGTH = 3000;

export const SLACK_CAPABILITIES: ChannelCapabilities = Object.freeze({
  maxMessageLength: MAX_MESSAGE_LENGTH,
  buttons: true,
  edits: true,
  files: true,
  // chat.update is Tier 3 (about 50 a minute) and a channel takes about one message a second.
  editIntervalMs: 1200,
  groupEditIntervalMs: 2000,
  streaming: 'native',
  // A spoken answer is an audio file (files.uploadV2), which Slack plays inline.
  spokenAnswers: 'audio_file',
});
