import '../support/env.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_IN_THREAD_MS } from '../../adapters/slack/thread-membership.js';
import type { InboundMessage } from '../../src/gateway/channel.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { OWNER } from '../support/gateway.js';
import { slackAdapter } from '../support/slack-testbed.js';

/** Slack events of one workspace spread over several hob processes: nothing one process learnt alone may mislead it. */

const CHANNEL = 'C0TEAM';
let fake: FakeSlack;
beforeAll(async () => {
  fake = await startFakeSlack();
  fake.person(OWNER);
});
afterAll(() => fake.close());

describe('slack from several processes', () => {
  it('takes a follow-up in a thread another process answered in, after this one heard "not hob\'s thread"', async () => {
    let now = 1_000_000;
    const received: InboundMessage[] = [];
    const listening = slackAdapter(fake, { now: () => now });
    await listening.start({ message: (message) => void received.push(message), button: () => {} });
    try {
      const parent = await fake.channelMessage(OWNER, CHANNEL, 'the plan');
      await fake.channelMessage(OWNER, CHANNEL, 'before hob was asked', { threadTs: parent });
      await fake.waitFor(() => fake.web.callsOf('conversations.replies').length === 1, 5000, 'Slack asked about the thread');

      // The other process, which ran the conversation, answered in the thread.
      await slackAdapter(fake).send({ chatId: CHANNEL, threadId: parent }, { text: 'Noted.' });
      now += NOT_IN_THREAD_MS;
      await fake.channelMessage(OWNER, CHANNEL, 'and the budget?', { threadTs: parent });

      await fake.waitFor(() => received.length === 1, 5000, 'the follow-up');
      expect(received.map((message) => [message.text, message.replyToBot])).toEqual([['and the budget?', true]]);
      expect(fake.web.callsOf('conversations.replies')).toHaveLength(2);
    } finally {
      await listening.stop();
    }
  });
});
