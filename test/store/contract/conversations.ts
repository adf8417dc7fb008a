import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/core/messages.js';
import { useStore, type StoreFactory } from './harness.js';

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const answer = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });
const toolCall: Message = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'bash', input: { command: 'ls' } }] };

/** Sessions, messages, compaction boundaries, running marks, usage and the archive. */
export function conversationsContract(factory: StoreFactory): void {
  const fresh = useStore(factory);

  describe(`conversations (${factory.kind})`, () => {
    it('keeps one active session per conversation, and /new starts another whose history is empty', async () => {
      const { store } = await fresh();
      const first = store.conversations.activeSession('telegram:1');
      expect(store.conversations.activeSession('telegram:1').id).toBe(first.id);
      store.conversations.appendMessage(first.id, user('hello'));
      const second = store.conversations.startSession('telegram:1');
      expect(second.id).not.toBe(first.id);
      expect(store.conversations.activeSession('telegram:1').id).toBe(second.id);
      expect(store.conversations.loadMessages(second.id)).toEqual([]);
      expect(store.conversations.loadMessages(first.id)).toEqual([user('hello')]);
    });

    it('says when it started the session it returns (a new conversation has nothing to read back)', async () => {
      const { store } = await fresh();
      expect(store.conversations.activeSession('discord:9').started).toBe(true);
      expect(store.conversations.activeSession('discord:9').started).toBeFalsy();
      expect(store.conversations.startSession('discord:9').started).toBe(true);
      expect(store.conversations.activeSession('discord:9').started).toBeFalsy();
    });

    it('loads messages in order, merging consecutive ones of one role, and from the latest compaction on', async () => {
      const { store } = await fresh();
      const { id } = store.conversations.activeSession('slack:C1');
      store.conversations.appendMessage(id, user('one'));
      store.conversations.appendMessage(id, user('two'));
      store.conversations.appendMessage(id, answer('three'));
      expect(store.conversations.loadMessages(id)).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] },
        answer('three'),
      ]);
      store.conversations.saveBoundary(id, [user('summary so far')], { trigger: 'auto', level: 1, tokensBefore: 100, tokensAfter: 10 });
      store.conversations.appendMessage(id, user('four'));
      expect(store.conversations.loadMessages(id)).toEqual([{ role: 'user', content: [{ type: 'text', text: 'summary so far' }, { type: 'text', text: 'four' }] }]);
    });

    it('finds runs a crash cut off: marked running with work left open', async () => {
      const { store } = await fresh();
      const waiting = store.conversations.activeSession('a').id;
      store.conversations.appendMessage(waiting, user('do it'), { run: 'starts' });
      const midTool = store.conversations.activeSession('b').id;
      store.conversations.appendMessage(midTool, user('list'), { run: 'starts' });
      store.conversations.appendMessage(midTool, toolCall);
      const done = store.conversations.activeSession('c').id;
      store.conversations.appendMessage(done, user('hi'), { run: 'starts' });
      store.conversations.appendMessage(done, answer('hello'), { run: 'ends' });
      expect(store.conversations.pendingWork().sort()).toEqual(['a', 'b']);
      expect(store.conversations.isRunning(waiting)).toBe(true);
      store.conversations.setRunning(waiting, false);
      expect(store.conversations.pendingWork()).toEqual(['b']);
    });

    it('tells the answer a run ended with, only when it was stored since the given time', async () => {
      const { store, clock } = await fresh();
      const { id } = store.conversations.activeSession('k');
      store.conversations.appendMessage(id, user('q'));
      const since = clock.now();
      clock.advance(10);
      store.conversations.appendMessage(id, answer('the answer'));
      expect(store.conversations.lastAnswerSince('k', since)).toBe('the answer');
      expect(store.conversations.lastAnswerSince('k', clock.now() + 1)).toBeUndefined();
      store.conversations.appendMessage(id, toolCall);
      expect(store.conversations.lastAnswerSince('k', since)).toBeUndefined();
    });

    it('adds up usage per session and keeps working memory', async () => {
      const { store } = await fresh();
      const { id } = store.conversations.activeSession('k');
      expect(store.conversations.usageTotals(id)).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, requests: 0 });
      store.conversations.recordUsage(id, 'm', { inputTokens: 10, outputTokens: 5, cacheReadTokens: 1, cacheWriteTokens: 2 }, 0.5);
      store.conversations.recordUsage(id, 'm', { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }, 0.25);
      expect(store.conversations.usageTotals(id)).toEqual({ inputTokens: 11, outputTokens: 6, cacheReadTokens: 1, cacheWriteTokens: 2, costUsd: 0.75, requests: 2 });
      expect(store.conversations.workingMemory(id)).toBeNull();
      store.conversations.appendMessage(id, user('x'), { workingMemory: 'goal: ship it' });
      expect(store.conversations.workingMemory(id)).toBe('goal: ship it');
      // A message, its running mark, working memory and the usage of the request that wrote it: one write.
      store.conversations.appendMessage(id, user('y'), { run: 'starts', workingMemory: 'goal: two' });
      expect(store.conversations.isRunning(id)).toBe(true);
      expect(store.conversations.workingMemory(id)).toBe('goal: two');
      store.conversations.appendMessage(id, answer('done'), { run: 'ends', usage: { model: 'm', usage: { inputTokens: 4, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0.25 } });
      expect(store.conversations.usageTotals(id)).toEqual({ inputTokens: 15, outputTokens: 8, cacheReadTokens: 1, cacheWriteTokens: 2, costUsd: 1, requests: 3 });
      expect(store.conversations.isRunning(id)).toBe(false);
      expect(store.conversations.workingMemory(id)).toBe('goal: two');
      expect(store.conversations.loadMessages(id).at(-1)).toEqual(answer('done'));
    });

    it("reopens only the person's own session, and not one another chat has open", async () => {
      const { store } = await fresh();
      const old = store.conversations.activeSession('chat-1').id;
      store.conversations.appendMessage(old, user('my plans for the garden'), { personId: 'p1' });
      store.conversations.startSession('chat-1');
      expect(store.conversations.reopenSession('chat-1', old, 'p2')).toBeUndefined();
      expect(store.conversations.reopenSession('chat-1', 'no-such-session', 'p1')).toBeUndefined();
      const open = store.conversations.activeSession('chat-2').id;
      store.conversations.appendMessage(open, user('elsewhere'), { personId: 'p1' });
      expect(store.conversations.reopenSession('chat-1', open, 'p1')).toBeUndefined();
      expect(store.conversations.reopenSession('chat-1', old, 'p1')?.id).toBe(old);
      expect(store.conversations.activeSession('chat-1').id).toBe(old);
    });
  });

  describe(`session archive (${factory.kind})`, () => {
    it("lists and searches a person's own sessions only, titled by their first message", async () => {
      const { store, clock } = await fresh();
      const mine = store.conversations.activeSession('chat-1').id;
      store.conversations.appendMessage(mine, user('Planning the garden party for Saturday'), { personId: 'ann' });
      store.conversations.appendMessage(mine, answer('Saturday works; I noted the garden party.'), { personId: 'ann' });
      clock.advance(1000);
      const theirs = store.conversations.activeSession('chat-2').id;
      store.conversations.appendMessage(theirs, user('The garden needs water'), { personId: 'bob' });

      const listed = store.archive.list('ann');
      expect(listed.map((session) => [session.id, session.title, session.messages, session.active])).toEqual([[mine, 'Planning the garden party for Saturday', 2, true]]);
      expect(store.archive.list(null).map((session) => session.id)).toEqual([theirs, mine]);

      const hits = store.archive.search('ann', 'garden');
      expect(hits.length).toBeGreaterThan(0);
      expect(new Set(hits.map((hit) => hit.sessionId))).toEqual(new Set([mine]));
      expect(hits[0]?.snippet).toContain('«');
      expect(store.archive.search('ann', 'water')).toEqual([]);
      expect(store.archive.search('ann', 'the of and')).toEqual([]);
      expect(store.archive.search('ann', 'garden', 5, 'chat-2')).toEqual([]);

      expect(store.archive.messages('bob', mine)).toBeUndefined();
      expect(store.archive.messages('ann', mine)?.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
      expect(store.archive.messages(null, theirs)?.title).toBe('The garden needs water');
    });
  });
}
