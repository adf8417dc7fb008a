import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/core/messages.js';
import { useStore, type StoreFactory } from './harness.js';

const said = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

/** People and their links, memory entries and their search, profiles, vectors, transactions. */
export function peopleContract(factory: StoreFactory): void {
  const fresh = useStore(factory);

  describe(`people and links (${factory.kind})`, () => {
    it('joins an identity with a live code and moves what it owned: memory, sessions, jobs, profile', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      let tries = 0;
      const code = store.people.newLinkCode('telegram:1', () => (++tries === 1 ? '111111' : '222222'), now, now + 600_000);
      expect(code).toBe('111111');
      expect(store.people.codeOwner('111111', now)).toBe('telegram:1');
      expect(store.people.codeOwner('111111', now + 600_000)).toBeUndefined();
      // A second code for the same person replaces the first; a taken code is never handed out twice.
      expect(store.people.newLinkCode('telegram:1', () => '222222', now, now + 600_000)).toBe('222222');
      expect(store.people.codeOwner('111111', now)).toBeUndefined();

      store.memory.save('slack:U2', { content: 'Prefers tea over coffee', source: 'tool' });
      const session = store.conversations.activeSession('slack:D2').id;
      store.conversations.appendMessage(session, said('notes about the boat trip'), { personId: 'slack:U2' });
      store.jobs.create({ id: 'j1', ownerId: 'slack:U2', createdBy: 'U2', originSession: 'slack:D2', target: { platform: 'slack', chatId: 'D2' }, kind: 'reminder', text: 'water plants', schedule: { kind: 'at', at: now + 1000 }, timezone: 'UTC', nextRunAt: now + 1000, createdAt: now });
      store.profiles.set('slack:U2', 'name', 'Sam', now);

      store.people.join('222222', 'slack', 'U2', 'slack:U2', 'telegram:1', now);
      expect(store.people.codeOwner('222222', now)).toBeUndefined();
      expect(store.people.linkedPerson('slack', 'U2')).toBe('telegram:1');
      expect(store.people.links('telegram:1')).toEqual([{ platform: 'slack', userId: 'U2' }]);
      expect(store.memory.list('telegram:1').map((entry) => entry.content)).toEqual(['Prefers tea over coffee']);
      expect(store.memory.list('slack:U2')).toEqual([]);
      expect(store.archive.search('telegram:1', 'boat').map((hit) => hit.sessionId)).toEqual([session]);
      expect(store.jobs.list('telegram:1').map((entry) => entry.id)).toEqual(['j1']);
      expect(store.profiles.get('telegram:1')).toEqual({ name: 'Sam' });

      store.people.unlink('slack', 'U2');
      expect(store.people.linkedPerson('slack', 'U2')).toBeUndefined();
    });

    it('counts wrong codes per person and kills a live code after too many', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      store.people.newLinkCode('ann', () => '123456', now, now + 600_000);
      for (let n = 0; n < 3; n++) store.people.recordWrongCode('mallory', now + n, now - 3_600_000, 3);
      expect(store.people.wrongCodesSince('mallory', now - 1)).toBe(3);
      expect(store.people.wrongCodesSince('mallory', now + 1)).toBe(1);
      expect(store.people.codeOwner('123456', now)).toBeUndefined();
    });
  });

  describe(`memory entries (${factory.kind})`, () => {
    it("saves, updates the same fact instead of repeating it, and keeps each person's entries to them", async () => {
      const { store } = await fresh();
      const first = store.memory.save('ann', { content: 'Padel with Jonas every Thursday at 19:00', tags: ['sport'], source: 'tool' });
      expect(first.updated).toBe(false);
      const again = store.memory.save('ann', { content: 'padel with Jonas, every Thursday at 19:00!', tags: ['weekly'], source: 'tool' });
      expect(again).toMatchObject({ updated: true, seq: first.seq });
      expect(again.entry.tags).toEqual(['sport', 'weekly']);
      const titled = store.memory.save('ann', { title: 'Car', content: 'The car is a blue Fiat', source: 'command' });
      expect(store.memory.save('ann', { title: 'car', content: 'The car is a red Fiat now', source: 'command' })).toMatchObject({ updated: true, seq: titled.seq });
      store.memory.save('bob', { content: 'Bob plays padel on Mondays', source: 'tool' });
      expect(store.memory.count('ann')).toBe(2);
      expect(store.memory.get('bob', first.entry.id)).toBeUndefined();
      expect(store.memory.forget('bob', first.entry.id)).toBeUndefined();
      expect(store.memory.bySeq(first.seq)?.personId).toBe('ann');
      expect(store.memory.list('ann', { limit: 1 })).toHaveLength(1);
    });

    it("finds entries by their words, stemmed or as a prefix, within the person's own memory", async () => {
      const { store } = await fresh();
      store.memory.save('ann', { content: 'Padel with Jonas every Thursday at 19:00', source: 'tool' });
      store.memory.save('ann', { content: 'Dentist appointment moved to March', source: 'tool' });
      store.memory.save('bob', { content: 'Bob plays padel on Mondays', source: 'tool' });
      const contents = (question: string, person = 'ann') => store.memory.searchText(person, question, 5).map((hit) => hit.entry.content);
      expect(contents('when do I play padel this week')).toEqual(['Padel with Jonas every Thursday at 19:00']);
      expect(contents('Jona')).toEqual(['Padel with Jonas every Thursday at 19:00']);
      expect(contents('appointments')).toEqual(['Dentist appointment moved to March']);
      expect(contents('padel', 'bob')).toEqual(['Bob plays padel on Mondays']);
      expect(contents('the of and')).toEqual([]);
    });

    it('counts uses, restores exported entries as they were, and forgets', async () => {
      const { store, clock } = await fresh();
      const saved = store.memory.save('ann', { content: 'Likes green tea', source: 'tool' });
      store.memory.markUsed([saved.seq]);
      expect(store.memory.bySeq(saved.seq)?.useCount).toBe(1);
      store.memory.flushUses();
      expect(store.memory.snapshotCandidates('ann', 5).mostUsed.map((entry) => entry.id)).toEqual([saved.entry.id]);
      const restored = store.memory.restore('ann', { id: 'keepid01', content: 'Birthday on 4 May', tags: ['family'], source: 'import', createdAt: 5, updatedAt: 6, useCount: 2 });
      expect(store.memory.get('ann', 'keepid01')).toMatchObject({ content: 'Birthday on 4 May', tags: ['family'], createdAt: 5, updatedAt: 6, useCount: 2 });
      // Someone else's id is not taken over: the entry gets a new one.
      expect(store.memory.restore('bob', { id: 'keepid01', content: 'x', tags: [], source: 'import', createdAt: clock.now(), updatedAt: clock.now(), useCount: 0 }).id).not.toBe('keepid01');
      expect(store.memory.unembedded(10).map((entry) => entry.seq)).toContain(restored.seq);
      store.memory.markEmbedded(restored.seq);
      expect(store.memory.unembedded(10).map((entry) => entry.seq)).not.toContain(restored.seq);
      expect(store.memory.forget('ann', 'keepid01')).toEqual({ seq: restored.seq });
      expect(store.memory.forgetAll('ann')).toEqual([saved.seq]);
      expect(store.memory.count('ann')).toBe(0);
      expect(store.memory.searchText('ann', 'tea', 5)).toEqual([]);
    });
  });

  describe(`profiles, vectors and transactions (${factory.kind})`, () => {
    it('sets, clears and forgets profile fields', async () => {
      const { store, clock } = await fresh();
      store.profiles.set('ann', 'timezone', 'Europe/Rome', clock.now());
      store.profiles.set('ann', 'name', 'Ann', clock.now());
      store.profiles.set('ann', 'name', undefined, clock.now());
      expect(store.profiles.get('ann')).toEqual({ timezone: 'Europe/Rome' });
      store.profiles.clear('ann');
      expect(store.profiles.get('ann')).toEqual({});
    });

    it("ranks a person's vectors by cosine distance and never shows another's", async () => {
      const { store } = await fresh();
      const vectors = store.vectors();
      if (!vectors) return expect(store.vectorSupport().mode).toBe('none');
      const near = store.memory.save('ann', { content: 'near', source: 'tool' }).seq;
      const far = store.memory.save('ann', { content: 'far', source: 'tool' }).seq;
      const bobs = store.memory.save('bob', { content: 'bob', source: 'tool' }).seq;
      const unit = (...values: number[]) => Float32Array.from({ length: 16 }, (_, i) => values[i] ?? 0);
      vectors.put(near, 'ann', unit(1, 0.1));
      vectors.put(far, 'ann', unit(-1, 0.2));
      vectors.put(bobs, 'bob', unit(1, 0.1));
      expect(store.hasVectors()).toBe(true);
      expect(vectors.nearest('ann', unit(1), 5)).toEqual([near, far]);
      vectors.delete([near]);
      expect(vectors.nearest('ann', unit(1), 5)).toEqual([far]);
    });

    it('commits a transaction across repositories whole, or rolls it back whole', async () => {
      const { store, clock } = await fresh();
      expect(() =>
        store.transaction(() => {
          store.memory.save('ann', { content: 'kept only with the rest', source: 'tool' });
          store.outbox.add({ platform: 'slack', chatId: 'C', message: '' as never, now: clock.now() });
          throw new Error('halfway');
        }),
      ).toThrow('halfway');
      expect(store.memory.count('ann')).toBe(0);
      expect(store.outbox.counts().pending).toBe(0);
      const value = store.transaction(() => {
        store.memory.save('ann', { content: 'both or neither', source: 'tool' });
        return store.transaction(() => store.memory.count('ann'));
      });
      expect(value).toBe(1);
    });
  });
}
