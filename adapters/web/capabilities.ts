import type { ChannelCapabilities } from '../../src/gateway/channel.js';

/** What the web chat allows, known before its server starts (the channel module reads them). */

/** A browser shows long messages well; the cap keeps one stored row and one event reasonable. */
export const MAX_MESSAGE_LENGTH = 16_000;

/** Commands a page's menu lists at most (hob's own come first, plugins' after). */
export const MAX_COMMANDS = 100;

export const WEB_CAPABILITIES: ChannelCapabilities = Object.freeze({
  maxMessageLength: MAX_MESSAGE_LENGTH,
  // The union has no entry for HTML; nobody reads it (the adapter renders Markdown itself).
  markup: 'plain',
  buttons: true,
  edits: true,
  files: true,
  // No platform limit: the throttle only spares the page redraws.
  editIntervalMs: 250,
  streaming: 'native',
});
