import type { ChannelAdapter, OutboundMessage, SentRef, Target } from '../gateway/channel.js';

/**
 * Where reminders and reports made in the terminal arrive while `hob start` runs there: the
 * terminal itself. Sending only (the terminal's input is the chat loop's), no buttons or edits.
 */
export function consoleOutlet(write: (text: string) => void = (text) => process.stdout.write(text)): ChannelAdapter {
  let next = 1;
  return {
    platform: 'console',
    capabilities: { maxMessageLength: 100_000, buttons: false, edits: false, files: false, editIntervalMs: 0, streaming: 'none' },
    start: async () => undefined,
    stop: async () => undefined,
    send: async (target: Target, message: OutboundMessage): Promise<SentRef> => {
      write(`\n${message.text}\n`);
      return { chatId: target.chatId, messageId: String(next++) };
    },
    edit: async () => undefined,
    typing: async () => undefined,
  };
}
