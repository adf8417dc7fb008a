import '../support/env.js';
import { adapter, fake, useTelegramTestbed } from '../support/telegram-testbed.js';
import { describe, expect, it } from 'vitest';
import type { InboundMessage, InboundSink } from '../../src/gateway/channel.js';
import { framedText } from '../../src/gateway/framing.js';

const ann = { id: 42, first_name: 'Ann' };
const annChat = { id: 42, type: 'private' as const };

useTelegramTestbed(() => ({ botUsername: 'hob_test_bot' }));

describe('Telegram adapter: a reply to an older message', () => {
  it('carries the text it replies to, so the model is told what "this" is', async () => {
    const messages: InboundMessage[] = [];
    const sink: InboundSink = { message: (message) => void messages.push(message), button: () => {} };
    await adapter().start(sink);
    const first = fake.sendText(ann, annChat, 'Book the dentist for Tuesday');
    await fake.waitFor(() => messages[0]);
    fake.sendText(ann, annChat, 'make it Wednesday instead', { reply_to_message_id: first });
    const reply = await fake.waitFor(() => messages[1]);
    expect(reply.quoted).toEqual({ text: 'Book the dentist for Tuesday', fromBot: false });
    expect(framedText(reply)).toBe('[Replying to an earlier message: "Book the dentist for Tuesday"] make it Wednesday instead');
    expect(messages[0]?.quoted).toBeUndefined();
  });
});
