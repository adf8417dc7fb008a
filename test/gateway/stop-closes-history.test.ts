import { afterEach, describe, expect, it } from 'vitest';
import { messageText, type Message } from '../../src/core/messages.js';
import { STOPPED_NOTE } from '../../src/engine/query-engine.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

describe('/stop in a chat', () => {
  it('closes the stopped request, so the next message is answered alone (also after a restart)', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ hang: true, text: 'Chapter one begins' }, { text: '4' }]);
    hob = await startTestGateway(channel, model);
    const dm = channel.chat(`dm-${OWNER.id}`);
    const find = (text: string) => channel.waitFor(() => dm.find((m) => m.text.includes(text)), 5000, `"${text}"`);
    channel.say(OWNER, 'Write me a novel');
    await channel.waitFor(() => model.requests.length === 1 || undefined, 5000, 'the request');
    channel.say(OWNER, '/stop');
    await find('Stopped.');
    channel.say(OWNER, 'What is 2+2?');
    await find('4');
    expect(model.requests[1]?.messages.map((m) => `${m.role}: ${messageText(m)}`)).toEqual([
      'user: Write me a novel',
      `assistant: Chapter one begins\n\n${STOPPED_NOTE}`,
      'user: What is 2+2?',
    ]);

    // After a restart the history reads the same way.
    await hob.close();
    const next = new ScriptedModel([{ text: '6' }]);
    const again = new MemoryChannel();
    hob = await startTestGateway(again, next, { dir: hob.dir });
    again.say(OWNER, 'And 3+3?');
    await again.waitFor(() => again.chat(`dm-${OWNER.id}`).find((m) => m.text === '6'), 5000, 'the answer');
    expect(next.requests[0]?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(messageText(next.requests[0]?.messages[1] as Message)).toContain(STOPPED_NOTE);
  });
});
