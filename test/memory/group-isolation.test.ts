import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../src/core/messages.js';
import { memoryTools } from '../../src/memory/tools.js';
import type { ProviderRequest } from '../../src/providers/types.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel, type ScriptedReply } from '../fakes/scripted-model.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { testMemory } from './fixture.js';

/**
 * Two people in one group: each saves, searches and forgets through the model's tools;
 * neither sees, finds or deletes the other's entries, by search or by a guessed id.
 * The model here obeys "save: …", "search: …", "forget: …" and then repeats the tool result.
 */
function obedientModel(): ScriptedModel {
  const step = (request: ProviderRequest): ScriptedReply => {
    const last = request.messages.at(-1) as Message;
    const result = last.content.find((block) => block.type === 'tool_result');
    if (result && result.type === 'tool_result') return { text: `tool said: ${result.content}` };
    const said = last.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join(' ');
    const command = /(save|search|forget): (.+)$/.exec(said);
    if (!command) return { text: 'ok' };
    const verb = command[1] ?? '';
    const value = command[2] ?? '';
    const input = verb === 'save' ? { content: value } : verb === 'search' ? { query: value } : { id: value };
    return { toolCalls: [{ name: `memory_${verb}`, input }] };
  };
  const model = new ScriptedModel();
  for (let n = 0; n < 40; n++) model.push(step);
  return model;
}

let testGateway: TestGateway | undefined;
afterEach(async () => {
  await testGateway?.close();
  testGateway = undefined;
});

describe('memory isolation in a group', () => {
  it('two people in one group each keep their own memory', async () => {
    const { memory } = testMemory();
    const channel = new MemoryChannel();
    testGateway = await startTestGateway(channel, obedientModel(), { tools: memoryTools(memory), memory });
    const group = { chatId: 'team', chatType: 'group' as const, mention: true };
    const replies = () => channel.chat('team').map((message) => message.text);
    const said = async (person: typeof OWNER, text: string) => {
      const before = replies().length;
      channel.say(person, text, group);
      return channel.waitFor(() => replies().length > before && replies().at(-1)?.startsWith('tool said') && replies().at(-1));
    };

    await said(OWNER, 'save: Ann parks on level 3 of the garage');
    await said(FRIEND, 'save: Bob parks on level 5 of the garage');
    const annEntry = memory.entries.list(`memory:${OWNER.id}`)[0];
    const bobEntry = memory.entries.list(`memory:${FRIEND.id}`)[0];
    expect(annEntry?.content).toBe('Ann parks on level 3 of the garage');
    expect(bobEntry?.content).toBe('Bob parks on level 5 of the garage');

    const annSearch = await said(OWNER, 'search: where do I park in the garage');
    expect(annSearch).toContain('Ann parks on level 3');
    expect(annSearch).not.toContain('Bob');
    const bobSearch = await said(FRIEND, 'search: garage level');
    expect(bobSearch).toContain('Bob parks on level 5');
    expect(bobSearch).not.toContain('Ann');

    // Bob guesses (or saw) Ann's id: not found, and Ann's entry stays.
    expect(await said(FRIEND, `forget: ${annEntry?.id}`)).toBe(`tool said: Memory ${annEntry?.id} was not found.`);
    expect(memory.entries.get(`memory:${OWNER.id}`, annEntry?.id ?? '')).toBeDefined();
    expect(await said(OWNER, `forget: ${annEntry?.id}`)).toBe(`tool said: Forgot ${annEntry?.id}.`);
    expect(await said(OWNER, 'search: garage')).toContain('Nothing in memory matches');
    expect(memory.entries.get(`memory:${FRIEND.id}`, bobEntry?.id ?? '')?.content).toBe('Bob parks on level 5 of the garage');
  });

  it('/memory and /settings show nothing personal in a group; /forget of another person\'s id is not found', async () => {
    const { memory } = testMemory();
    const channel = new MemoryChannel();
    testGateway = await startTestGateway(channel, new ScriptedModel(), { memory });
    const ann = memory.save(`memory:${OWNER.id}`, { content: 'Ann: the safe code is 1234', source: 'tool' }).entry;
    const group = { chatId: 'team', chatType: 'group' as const, mention: true };
    channel.say(FRIEND, '/memory', group);
    await channel.waitFor(() => channel.chat('team').at(-1)?.text.includes('only in a private chat'));
    channel.say(FRIEND, `/forget ${ann.id}`, group);
    await channel.waitFor(() => channel.chat('team').at(-1)?.text === `Memory ${ann.id} was not found.`);
    expect(memory.entries.get(`memory:${OWNER.id}`, ann.id)).toBeDefined();
    expect(channel.chat('team').map((message) => message.text).join('\n')).not.toContain('1234');
  });
});
