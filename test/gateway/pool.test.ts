import { afterEach, describe, expect, it } from 'vitest';
import { MemoryChannel, type Person } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

/** The pool of conversations: a cap, idle eviction, and history read back after eviction. */

let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

const people: Person[] = [OWNER, { id: '200', name: 'Bob' }];
const dm = (channel: MemoryChannel, person: Person) => channel.chat(`dm-${person.id}`);

/** The reply is out a moment before the run has wound down; eviction waits for that. */
async function idle(gateway: TestGateway, key: string): Promise<void> {
  for (let i = 0; i < 500 && gateway.gateway.pool.peek(key)?.busy; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(gateway.gateway.pool.peek(key)?.busy).toBe(false);
}

describe('conversation pool', () => {
  it('past the cap, a busy chat keeps its one run: a second message is steered, not run beside it', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ hang: true }, { hang: true }]);
    hob = await startTestGateway(channel, model, { maxConversations: 1 });
    channel.say(people[0] as Person, 'first chat, slow');
    await channel.waitFor(() => model.requests.length === 1, 5000, 'the first run');
    channel.say(people[1] as Person, 'second chat, slow');
    await channel.waitFor(() => model.requests.length === 2, 5000, 'the second run');

    channel.say(people[1] as Person, 'second chat again');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(model.requests).toHaveLength(2); // no third, parallel run
    channel.say(people[1] as Person, '/stop');
    await channel.waitFor(() => dm(channel, people[1] as Person).find((m) => m.text.startsWith('Stopping.')), 5000, 'Stopping.');
  });

  it('drops idle conversations beyond the cap and reads their history back on the next message', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'noted: blue' }, { text: 'noted: green' }, { text: 'you said blue' }]);
    hob = await startTestGateway(channel, model, { maxConversations: 1 });
    channel.say(OWNER, 'my colour is blue');
    await channel.waitFor(() => dm(channel, OWNER).find((m) => m.text === 'noted: blue'), 5000, 'first answer');
    await idle(hob, `memory:dm-${OWNER.id}`);
    channel.say(people[1] as Person, 'my colour is green');
    await channel.waitFor(() => dm(channel, people[1] as Person).find((m) => m.text === 'noted: green'), 5000, 'second answer');
    expect(hob.gateway.pool.size).toBe(1);
    expect(hob.gateway.pool.peek(`memory:dm-${OWNER.id}`)).toBeUndefined();

    channel.say(OWNER, 'what is my colour?');
    await channel.waitFor(() => dm(channel, OWNER).find((m) => m.text === 'you said blue'), 5000, 'third answer');
    const history = JSON.stringify(model.requests[2]?.messages);
    expect(history).toContain('my colour is blue');
    expect(history).not.toContain('green');
  });

  it('past its budget of held history, an idle conversation lets its history go and the next message reads it back whole', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'noted: blue' }, { text: 'noted: green' }, { text: 'you said blue' }, { text: 'still blue' }]);
    // A budget smaller than one exchange: every idle conversation but the newest lets its history go.
    hob = await startTestGateway(channel, model, { heldHistoryBytes: 1 });
    const ann = `memory:dm-${OWNER.id}`;
    channel.say(OWNER, 'my colour is blue');
    await channel.waitFor(() => dm(channel, OWNER).find((m) => m.text === 'noted: blue'), 5000, 'first answer');
    await idle(hob, ann);
    expect(hob.gateway.pool.peek(ann)?.heldBytes).toBeGreaterThan(0);

    channel.say(people[1] as Person, 'my colour is green');
    await channel.waitFor(() => dm(channel, people[1] as Person).find((m) => m.text === 'noted: green'), 5000, 'second answer');
    // Ann's conversation stays (its engine, its usage); only the history it held is gone (by the end of the turn Bob's message came in).
    const { pool } = hob.gateway;
    await channel.waitFor(() => pool.peek(ann)?.heldBytes === 0, 5000, "Ann's history let go");
    expect(hob.gateway.pool.size).toBe(2);

    channel.say(OWNER, 'what is my colour?');
    await channel.waitFor(() => dm(channel, OWNER).find((m) => m.text === 'you said blue'), 5000, 'third answer');
    channel.say(OWNER, 'and now?');
    await channel.waitFor(() => dm(channel, OWNER).find((m) => m.text === 'still blue'), 5000, 'fourth answer');
    // The model saw Ann's whole conversation each time, in order, and nothing of Bob's.
    const said = (request: number) => (model.requests[request]?.messages ?? []).map((message) => `${message.role}: ${JSON.stringify(message.content)}`);
    expect(said(2)).toHaveLength(3);
    expect(said(2).join('\n')).toMatch(/user: .*my colour is blue[\s\S]*assistant: .*noted: blue[\s\S]*user: .*what is my colour/);
    expect(said(3)).toHaveLength(5);
    expect(said(3).slice(0, 3)).toEqual(said(2));
    expect(said(3).join('\n')).not.toContain('green');
  });

  it('an idle sweep drops conversations idle past the timeout, and keeps a busy one', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'done' }, { hang: true }]);
    hob = await startTestGateway(channel, model, { idleTimeoutSeconds: 0 });
    channel.say(OWNER, 'quick');
    await channel.waitFor(() => dm(channel, OWNER).find((m) => m.text === 'done'), 5000, 'answer');
    await idle(hob, `memory:dm-${OWNER.id}`);
    channel.say(people[1] as Person, 'slow');
    await channel.waitFor(() => model.requests.length === 2, 5000, 'the slow run');
    expect(hob.gateway.pool.sweep()).toBe(1);
    expect(hob.gateway.pool.peek(`memory:dm-${people[1]?.id}`)).toBeDefined();
    expect(hob.gateway.pool.peek(`memory:dm-${OWNER.id}`)).toBeUndefined();
    hob.gateway.pool.peek(`memory:dm-${people[1]?.id}`)?.stop();
  });
});
