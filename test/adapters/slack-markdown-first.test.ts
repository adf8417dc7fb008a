import '../support/env.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SlackAdapter } from '../../adapters/slack/slack-adapter.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { slackAdapter } from '../support/slack-testbed.js';

/**
 * Slack's mrkdwn converter (slackify-markdown) loads on first need, not at start
 * (adapters/slack/render.ts): a plain answer never needs it. The first message that does waits
 * for it, here a file whose only text is its caption, sent before hob was ever idle.
 */
let fake: FakeSlack;
let adapter: SlackAdapter;

beforeEach(async () => {
  fake = await startFakeSlack();
  adapter = slackAdapter(fake);
  await adapter.start({ message: () => undefined, button: () => undefined });
});

afterEach(async () => {
  await adapter.stop();
  await fake.close();
});

describe('Slack adapter: the first Markdown after a start', () => {
  it("is Slack's mrkdwn, even as the comment of a file sent before anything loaded the converter", async () => {
    await adapter.send({ chatId: 'C0TEAM' }, { text: '', file: { name: 'notes.txt', data: Buffer.from('n'), caption: 'Your **notes** and ~~old~~ ones' } });
    const shown = fake.web.messages.map((message) => message.text);
    expect(shown).toEqual(['Your *notes* and ~old~ ones']);
  });
});
