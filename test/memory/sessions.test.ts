import { afterEach, describe, expect, it } from 'vitest';
import { unlinkedPeople } from '../../src/core/person.js';
import { messageText, type Message } from '../../src/core/messages.js';
import { QueryEngine } from '../../src/engine/query-engine.js';
import { sessionSearchTool } from '../../src/memory/session-search.js';
import { SqliteSessionArchive, ftsQuery } from '../../src/store/sqlite/session-archive.js';
import { toMarkdown } from '../../src/cli/sessions.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect } from '../support/engine.js';
import { engineDeps } from '../support/deps.js';
// cl100k_base: a real tokenizer at half the import cost of the default (o200k_base), counts within a few percent.
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import type { ProviderRequest } from '../../src/providers/types.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

const as = (userId: string) => ({ userId, interaction: answering(), signal: new AbortController().signal });
const ctx = (sessionKey: string, userId: string) => ({ signal: new AbortController().signal, workspace: '/tmp', sessionKey, userId, interaction: answering(), progress: () => undefined });

let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

describe('past sessions belong to their person', () => {
  it('lists, searches and resumes only the asking person\'s sessions', async () => {
    const deps = engineDeps(new ScriptedModel());
    const ann = new QueryEngine('telegram:1', deps);
    await collect(ann.submit('We decided the router goes in the hallway closet', as('1')));
    ann.reset();
    await collect(ann.submit('Plan the garden for spring', as('1')));
    const bob = new QueryEngine('telegram:2', deps);
    await collect(bob.submit('My router password hint is blue-falcon', as('2')));

    const archive = new SqliteSessionArchive(deps.db);
    expect(archive.list('telegram:1').map((s) => s.title)).toEqual(['Plan the garden for spring', 'We decided the router goes in the hallway closet']);
    const annFirst = archive.list('telegram:1')[1]?.id as string;
    expect(archive.list('telegram:2').map((s) => s.title)).toEqual(['My router password hint is blue-falcon']);

    const search = sessionSearchTool(archive, unlinkedPeople);
    const annFinds = String(await search.run({ query: 'what did we decide about the router?' }, ctx('telegram:1', '1')));
    expect(annFinds).toContain('hallway');
    expect(annFinds).not.toContain('blue-falcon');
    const bobFinds = String(await search.run({ query: 'router hallway closet' }, ctx('telegram:2', '2')));
    expect(bobFinds).not.toContain('hallway');

    // In a group, Ann's search covers only what was said in that group (everyone reads the answer).
    const group = new QueryEngine('telegram:-5:u1', deps);
    await collect(group.submit('The router in the office is a Fritzbox', as('1')));
    const inGroup = String(await search.run({ query: 'router' }, { ...ctx('telegram:-5:u1', '1'), inGroup: true }));
    expect(inGroup).toContain('Fritzbox');
    expect(inGroup).not.toContain('hallway');
    // That group conversation is still open there: it is not pulled into the DM.
    expect(ann.resume(group.status().sessionId, '1')).toBe(false);

    // Bob cannot reopen Ann's session, even knowing its id; Ann can.
    expect(bob.resume(annFirst, '2')).toBe(false);
    expect(bob.messages.map(messageText).join(' ')).not.toContain('hallway');
    expect(ann.resume(annFirst, '1')).toBe(true);
    expect(messageText(ann.messages[0] as Message)).toContain('hallway closet');
    expect(archive.messages('telegram:2', annFirst)).toBeUndefined();
  });

  it('turns a question into an any-word prefix query without FTS syntax', () => {
    expect(ftsQuery('What did we decide about the "router" (last month)?')).toBe('"decide"* OR "router"* OR "last"* OR "month"*');
    expect(ftsQuery('the of and')).toBe('');
  });

  it('exports a session as Markdown with every message', async () => {
    const deps = engineDeps(new ScriptedModel([{ text: 'Sure: 42.' }]));
    await collect(new QueryEngine('console:ann', deps).submit('What is the answer?', as('ann')));
    const archive = new SqliteSessionArchive(deps.db);
    const [session] = archive.list('console:ann');
    const markdown = toMarkdown(session!, archive.messages('console:ann', session!.id)!.messages);
    expect(markdown).toMatch(/^# What is the answer\?\n/);
    expect(markdown).toMatch(/## Person — .*\n\nWhat is the answer\?/);
    expect(markdown).toMatch(/## hob — .*\n\nSure: 42\./);
  });
});

describe('/sessions, /resume and /compact in a chat', () => {
  it('lists the person\'s own conversations, reopens one, and refuses in a group', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'Noted the boiler.' }, { text: 'Noted the bike.' }, { text: 'Bob noted.' }, { text: 'Yes, the boiler.' }]);
    hob = await startTestGateway(channel, model);
    const dm = channel.chat(`dm-${OWNER.id}`);
    const find = (text: string, chat = dm) => channel.waitFor(() => chat.find((m) => m.text.includes(text)), 5000, `"${text}"`);
    channel.say(OWNER, 'The boiler service is on May 3');
    await find('Noted the boiler.');
    channel.say(OWNER, '/new');
    await find('Started a new conversation');
    channel.say(OWNER, 'My bike lock code is 4711');
    await find('Noted the bike.');
    channel.say(FRIEND, 'Bob here with a secret plan');
    await channel.waitFor(() => channel.chat(`dm-${FRIEND.id}`).find((m) => m.text.includes('Bob noted.')), 5000, "Bob's answer");

    channel.say(OWNER, '/sessions');
    const list = await find('Your conversations, newest first');
    expect(list.text).toMatch(/1\. My bike lock code is 4711 — .* \(current\)\n2\. The boiler service is on May 3 — /);
    expect(list.text).not.toContain('secret plan');

    channel.say(OWNER, '/resume 2');
    await find('Resumed “The boiler service is on May 3”');
    channel.say(OWNER, 'Which appointment did I mention?');
    await find('Yes, the boiler.');
    expect(model.requests.at(-1)?.messages.map(messageText)).toEqual(['The boiler service is on May 3', 'Noted the boiler.', 'Which appointment did I mention?']);

    channel.say(OWNER, '/sessions', { chatId: 'group-9', chatType: 'group', mention: true });
    await channel.waitFor(() => channel.chat('group-9').find((m) => m.text.includes('only in a direct chat')), 5000, 'the refusal');
  });

  it('/compact summarizes the older part by hand and says so', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ text: `One. ${'a '.repeat(400)}` }, { text: `Two. ${'b '.repeat(400)}` }, { text: '<summary>They said first and second.</summary>' }, { text: 'Three.' }]);
    hob = await startTestGateway(channel, model);
    const dm = channel.chat(`dm-${OWNER.id}`);
    const find = (text: string) => channel.waitFor(() => dm.find((m) => m.text.includes(text)), 5000, `"${text}"`);
    channel.say(OWNER, 'first');
    await find('One.');
    channel.say(OWNER, 'second');
    await find('Two.');
    channel.say(OWNER, '/compact');
    const notice = await find('Compacted the conversation');
    expect(notice.text).toMatch(/\(level 4\): about [\d,]+ → [\d,]+ tokens/);
    channel.say(OWNER, 'third');
    await find('Three.');
    expect(messageText(model.requests.at(-1)?.messages[0] as Message)).toMatch(/^\[Earlier conversation compacted[\s\S]*They said first and second\./);
    expect((hob.db.prepare('SELECT COUNT(*) n FROM messages').get() as { n: number }).n).toBe(6);
  });

  it('tells the person once, in the progress message, when a long conversation was compacted', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'Got the first.' }, { text: 'Got the second.' }, { text: 'Got the third.' }]);
    model.countInput = (request: ProviderRequest) => countTokens(request.system) + countTokens(JSON.stringify(request.messages));
    const deps = { ...engineDeps(model), contextWindow: 3_000, compactionBufferTokens: 300 };
    hob = await startTestGateway(channel, model, { engine: (key) => new QueryEngine(key, deps) });
    const dm = channel.chat(`dm-${OWNER.id}`);
    const find = (text: string) => channel.waitFor(() => dm.find((m) => m.text.includes(text)), 5000, `"${text}"`);
    const long = (name: string) => `${name}: ${Array.from({ length: 350 }, (_, i) => `item${i}`).join(' ')}`;
    channel.say(OWNER, long('first'));
    await find('Got the first.');
    channel.say(OWNER, long('second'));
    await find('Got the second.');
    channel.say(OWNER, long('third'));
    await find('Got the third.');
    const notices = dm.filter((m) => m.text.includes('This conversation got long, so I summarized its older part'));
    expect(notices).toHaveLength(1);
    expect(notices[0]?.text).toMatch(/^🗜 /);
    expect(model.requests[2]?.messages.length).toBeLessThan(5);
  });
});
