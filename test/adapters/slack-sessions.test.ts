import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { messageText, type Message } from '../../src/core/messages.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { slackAdapter } from '../support/slack-testbed.js';

/** `/hob sessions` and `/hob resume N` in Slack: your own past conversations, only in a DM. */
const ann = { ...OWNER };
const bob = { ...FRIEND };

let fake: FakeSlack | undefined;
let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
  await fake?.close();
  fake = undefined;
});

describe('slack: /hob sessions and /hob resume', () => {
  it('lists your own conversations and reopens one; Bob sees only his', async () => {
    const model = new ScriptedModel([{ text: 'Noted the boiler.' }, { text: 'Noted the bike.' }, { text: 'Bob noted.' }, { text: 'Yes, the boiler.' }]);
    const slack = await startFakeSlack();
    fake = slack;
    for (const person of [ann, bob]) slack.person(person);
    hob = await startTestGateway(slackAdapter(slack), model);
    const answered = (person: typeof ann, text: string) => slack.waitFor(() => slack.seen(dmOf(person.id)).find((message) => message.text === text), 5000, `"${text}"`);
    const ephemeral = (person: typeof ann, text: string) => slack.waitFor(() => slack.ephemeralsFor(person).find((shown) => shown.includes(text)), 5000, `"${text}"`);

    await slack.dm(ann, 'The boiler service is on May 3');
    await answered(ann, 'Noted the boiler.');
    await slack.slash(ann, dmOf(ann.id), 'new');
    await ephemeral(ann, 'Started a new conversation');
    await slack.dm(ann, 'My bike lock code is 4711');
    await answered(ann, 'Noted the bike.');
    await slack.dm(bob, 'Bob here with a secret plan');
    await answered(bob, 'Bob noted.');

    await slack.slash(ann, dmOf(ann.id), 'sessions');
    const list = await slack.waitFor(() => [...slack.ephemeralsFor(ann), ...slack.seen(dmOf(ann.id)).map((m) => m.text)].find((text) => text.includes('Your conversations, newest first')), 5000, 'the list');
    expect(list).toMatch(/1\. My bike lock code is 4711 — .* \(current\)\n2\. The boiler service is on May 3 — /);
    expect(list).not.toContain('secret plan');

    await slack.slash(ann, dmOf(ann.id), 'resume 2');
    await slack.waitFor(() => [...slack.ephemeralsFor(ann), ...slack.seen(dmOf(ann.id)).map((m) => m.text)].find((text) => text.includes('Resumed “The boiler service is on May 3”')), 5000, 'the resume');
    await slack.dm(ann, 'Which appointment did I mention?');
    await answered(ann, 'Yes, the boiler.');
    expect(model.requests.at(-1)?.messages.map((message: Message) => messageText(message))).toEqual(['The boiler service is on May 3', 'Noted the boiler.', 'Which appointment did I mention?']);

    await slack.slash(bob, dmOf(bob.id), 'sessions');
    const bobs = await slack.waitFor(() => [...slack.ephemeralsFor(bob), ...slack.seen(dmOf(bob.id)).map((m) => m.text)].find((text) => text.includes('Your conversations, newest first')), 5000, "Bob's list");
    expect(bobs).toContain('Bob here with a secret plan');
    expect(bobs).not.toMatch(/boiler|bike/);
  });
});
