import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { messageText, type Message } from '../../src/core/messages.js';
import { GENERAL_ID } from '../fakes/discord/index.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { discordBed, type DiscordBed } from '../support/discord-testbed.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

let bed: DiscordBed | undefined;
let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  await bed?.close();
  hob = undefined;
  bed = undefined;
});

describe('discord: past sessions and compaction as application commands', () => {
  it('/sessions lists your own, /resume 2 reopens one, /compact answers; a server channel refuses /sessions', async () => {
    const model = new ScriptedModel([{ text: 'Noted the boiler.' }, { text: 'Noted the bike.' }, { text: 'Bob noted.' }, { text: 'Yes, the boiler.' }]);
    bed = await discordBed();
    hob = await startTestGateway(bed.adapter, model);
    const { fake } = bed;
    const dm = fake.dmChannelOf(OWNER);
    const answered = (channel: string, text: string) => fake.waitFor(() => fake.botMessages(channel).some((message) => message.content === text), 8000, `"${text}"`);
    const notice = (text: string, who = OWNER) => fake.waitFor(() => fake.noticesFor(who).find((n) => n.includes(text)), 8000, `"${text}"`);

    fake.dm(OWNER, 'The boiler service is on May 3');
    await answered(dm, 'Noted the boiler.');
    fake.slash(OWNER, dm, 'new');
    await notice('Started a new conversation');
    fake.dm(OWNER, 'My bike lock code is 4711');
    await answered(dm, 'Noted the bike.');
    fake.dm(FRIEND, 'Bob here with a secret plan');
    await answered(fake.dmChannelOf(FRIEND), 'Bob noted.');

    fake.slash(OWNER, dm, 'sessions');
    const list = await notice('Your conversations, newest first');
    expect(list).toMatch(/1\. My bike lock code is 4711 — .* \(current\)\n2\. The boiler service is on May 3 — /);
    expect(list).not.toContain('secret plan');

    fake.slash(OWNER, dm, 'resume', '2');
    await notice('Resumed “The boiler service is on May 3”');
    fake.dm(OWNER, 'Which appointment did I mention?');
    await answered(dm, 'Yes, the boiler.');
    expect(model.requests.at(-1)?.messages.map((message: Message) => messageText(message))).toEqual(['The boiler service is on May 3', 'Noted the boiler.', 'Which appointment did I mention?']);

    fake.slash(OWNER, dm, 'compact');
    const compacted = await fake.waitFor(() => fake.noticesFor(OWNER).find((n) => /compact/i.test(n)), 8000, 'the /compact answer');
    expect(compacted).toBe('Nothing to compact: the conversation is already short.');

    fake.slash(FRIEND, GENERAL_ID, 'sessions');
    await notice('only in a direct chat', FRIEND);
  });
});
