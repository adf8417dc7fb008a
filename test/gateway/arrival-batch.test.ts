import { afterEach, describe, expect, it } from 'vitest';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { tempDir } from '../support/engine.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

/**
 * Messages that arrive in the same moment (a platform's batch: several people writing at
 * once) are stored together, in one commit, each in a savepoint of its own (router.ts).
 * What a person notices: each is answered once, also across a kill; one whose message could
 * not be stored is asked to send it again and is not answered by surprise later, and the
 * others are not held up by it.
 */

const running: TestGateway[] = [];
afterEach(async () => {
  for (const hob of running.splice(0)) await hob.close();
});

const dm = (channel: MemoryChannel, person: { id: string }) => channel.chat(`dm-${person.id}`).map((message) => message.text);

describe('messages arriving together', () => {
  it('one that cannot be stored is undone alone: its person is asked again, the other answered, and a restart answers nothing more', async () => {
    const dir = tempDir('hob-arrival-');
    const channel = new MemoryChannel();
    const hob = await startTestGateway(channel, new ScriptedModel([{ text: 'Hello Ann.' }]), { dir });
    running.push(hob);
    // Bob's row is written, then the store fails: his part of the commit must go, Ann's stay.
    const inbox = hob.store.inbox;
    const add = inbox.add.bind(inbox);
    inbox.add = (entry) => {
      const id = add(entry);
      if (entry.sessionKey.includes(FRIEND.id)) throw new Error('disk I/O error');
      return id;
    };
    channel.say(OWNER, 'hello');
    channel.say(FRIEND, 'hi there');
    await channel.waitFor(() => dm(channel, OWNER).length === 1 && dm(channel, FRIEND).length === 1, 5000, 'an answer for Ann and a word for Bob');
    expect(dm(channel, OWNER)).toEqual(['Hello Ann.']);
    expect(dm(channel, FRIEND)[0]).toContain('Sorry, I could not take that message (disk I/O error)');
    expect(hob.db.prepare('SELECT session_key FROM inbox').all()).toEqual([{ session_key: expect.stringContaining(OWNER.id) }]);
    await hob.gateway.stop({ stopRuns: false });
    hob.db.close();

    const after = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'a surprise answer' }]);
    const restarted = await startTestGateway(after, model, { dir });
    running.push(restarted);
    restarted.gateway.delivery.start(20);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(model.requests).toEqual([]);
    expect(dm(after, FRIEND)).toEqual([]);
  });

  it('a kill once they are stored: after the restart each is answered, once', async () => {
    const dir = tempDir('hob-arrival-');
    const channel = new MemoryChannel();
    const hob = await startTestGateway(channel, new ScriptedModel([{ hang: true }, { hang: true }]), { dir });
    running.push(hob);
    channel.say(OWNER, 'first question');
    channel.say(FRIEND, 'second question');
    // Both runs started (the model holds them): both messages are in the file.
    await channel.waitFor(() => channel.typingChats.length === 2, 5000, 'both runs');
    await hob.gateway.stop({ stopRuns: false }); // the process "dies" mid-run
    hob.db.close();

    const after = new MemoryChannel();
    const restarted = await startTestGateway(after, new ScriptedModel([{ text: 'One answer.' }, { text: 'One answer.' }]), { dir });
    running.push(restarted);
    await after.waitFor(() => dm(after, OWNER).length === 1 && dm(after, FRIEND).length === 1, 5000, 'both answered');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(dm(after, OWNER)).toEqual(['One answer.']);
    expect(dm(after, FRIEND)).toEqual(['One answer.']);
    // Each finds their own message in session search, and only theirs.
    const personOf = (person: { id: string }) => (restarted.db.prepare('SELECT person_id FROM sessions WHERE session_key LIKE ?').get(`%${person.id}%`) as { person_id: string }).person_id;
    expect(restarted.store.archive.search(personOf(OWNER), 'question').map((hit) => hit.snippet)).toEqual([expect.stringContaining('first')]);
    expect(restarted.store.archive.search(personOf(FRIEND), 'question').map((hit) => hit.snippet)).toEqual([expect.stringContaining('second')]);
  });
});
