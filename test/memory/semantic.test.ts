import '../support/env.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { embeddingsClient } from '../../src/memory/embeddings.js';
import { startFakeEmbeddings, type FakeEmbeddings } from '../fakes/embeddings.js';
import { testMemory } from './fixture.js';

/** Semantic search with an OpenAI-compatible endpoint (a loopback fake, through the openai SDK). */

let fake: FakeEmbeddings;
beforeEach(async () => {
  fake = await startFakeEmbeddings({ groups: [['gift', 'present', 'delight', 'happy', 'collect', 'vintage', 'fountain', 'pen'], ['brother', 'marco', 'sibling']], apiKey: 'emb-key' });
});
afterEach(async () => {
  await fake.close();
});

const settings = () => ({ baseUrl: fake.baseUrl, model: 'fake-embed', apiKey: 'emb-key' });

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

describe('semantic memory search', () => {
  it('finds an entry that shares no word with the question, by fusing vector and full-text rankings', async () => {
    const { memory } = testMemory({ embeddings: settings() });
    memory.save('telegram:42', { content: 'Marco collects vintage fountain pens', source: 'tool' });
    memory.save('telegram:42', { content: 'Buy a birthday cake for the office party', source: 'tool' });
    memory.save('telegram:42', { content: 'What would really help: a quieter desk', source: 'tool' });
    await memory.settled();

    const question = 'what present would delight my brother';
    const fullTextOnly = testMemory({ extract: 'off' }).memory;
    fullTextOnly.save('telegram:42', { content: 'Marco collects vintage fountain pens', source: 'tool' });
    expect(await fullTextOnly.search('telegram:42', question, 3)).toEqual([]);

    const found = await memory.search('telegram:42', question, 1);
    expect(found.map((entry) => entry.content)).toEqual(['Marco collects vintage fountain pens']);
    // Full-text hits still count: a word match ranks with the vectors.
    const mixed = await memory.search('telegram:42', 'birthday cake', 1);
    expect(mixed[0]?.content).toBe('Buy a birthday cake for the office party');
    expect(memory.semantic).toBe(true);
  });

  it('embeds entries off the reply path and retries a failed embedding later, never losing the entry', async () => {
    fake.failNext(3); // the first call and its SDK retry fail, and the next one too: hob waits and tries again
    const { memory } = testMemory({ embeddings: settings(), retryDelayMs: 20 });
    const { entry } = memory.save('telegram:42', { content: 'Marco collects vintage fountain pens', source: 'tool' });
    // Saved at once, found by full text while the vector is still missing.
    expect((await memory.search('telegram:42', 'fountain pens', 1))[0]?.id).toBe(entry.id);
    await until(() => fake.embedded.includes('Marco collects vintage fountain pens'));
    await memory.settled();
    expect((await memory.search('telegram:42', 'a present for my sibling', 1))[0]?.id).toBe(entry.id);
  });

  it('searches full-text only when the endpoint is down, and keeps other people out of the vector ranking', async () => {
    const { memory } = testMemory({ embeddings: settings() });
    memory.save('telegram:43', { content: 'Marco collects vintage fountain pens', source: 'tool' });
    memory.save('telegram:42', { content: 'Lunch with Marco on Friday', source: 'tool' });
    await memory.settled();
    const found = await memory.search('telegram:42', 'a present for my brother', 5);
    expect(found.map((entry) => entry.content)).toEqual(['Lunch with Marco on Friday']);
    fake.failNext(10);
    expect((await memory.search('telegram:42', 'lunch', 5)).map((entry) => entry.content)).toEqual(['Lunch with Marco on Friday']);
  });

  it('forgetting an entry removes its vectors too, and an odd dimension count works as well', async () => {
    const { memory, db } = testMemory({ embeddings: settings() });
    const { entry } = memory.save('telegram:42', { content: 'Marco collects vintage fountain pens', source: 'tool' });
    await memory.settled();
    expect(db.prepare('SELECT count(*) AS n FROM memory_vecf_64').get()).toEqual({ n: 1 });
    memory.forget('telegram:42', entry.id);
    expect(db.prepare('SELECT count(*) AS n FROM memory_vecf_64').get()).toEqual({ n: 0 });
    expect(db.prepare('SELECT count(*) AS n FROM memory_vecbit_64').get()).toEqual({ n: 0 });

    const odd = await startFakeEmbeddings({ dimensions: 12, groups: [['gift', 'present', 'pen', 'fountain']] });
    try {
      const other = testMemory({ embeddings: { baseUrl: odd.baseUrl, model: 'fake-embed' } }).memory;
      other.save('telegram:42', { content: 'Marco collects vintage fountain pens', source: 'tool' });
      other.save('telegram:42', { content: 'Dinner on Friday at eight', source: 'tool' });
      await other.settled();
      expect((await other.search('telegram:42', 'a present idea', 1))[0]?.content).toBe('Marco collects vintage fountain pens');
    } finally {
      await odd.close();
    }
  });

  it('sends the model name and key, and asks for float vectors', async () => {
    const embed = embeddingsClient(settings());
    const [vector] = await embed(['hello']);
    expect(vector).toHaveLength(64);
    await expect(embeddingsClient({ ...settings(), apiKey: 'wrong' })(['hello'])).rejects.toThrow(/401|Incorrect API key/);
  });
});
