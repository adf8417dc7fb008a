import { describe, expect, it } from 'vitest';
import { buildFtsQuery } from '../../src/store/memory/query.js';
import { ENTRIES, QUESTIONS, testMemory } from './fixture.js';

describe('memory search quality (full-text only)', () => {
  const { memory } = testMemory({ extract: 'off' });
  const ids = new Map<string, string>();
  for (const [key, content] of Object.entries(ENTRIES)) ids.set(key, memory.save('telegram:42', { content, source: 'tool' }).entry.id);

  it.each(QUESTIONS)('"%s" finds its entry in the top 3', async (question, key) => {
    const found = await memory.search('telegram:42', question, 3);
    expect(found.map((entry) => entry.content)).toContain(ENTRIES[key]);
  });

  it('asks with the meaningful words only: stop words dropped, longer words as prefixes, any word matching', () => {
    expect(buildFtsQuery('when do I play padel this week')).toBe('"play"* OR "padel"* OR "week"*');
    expect(buildFtsQuery('wann spiele ich mit Jonas')).toBe('"spiele"* OR "jonas"*');
    expect(buildFtsQuery('what is the? "OR" NEAR(')).toBe('"near"*');
    expect(buildFtsQuery('is it the')).toBeUndefined();
  });

  it('finds nothing for a question with no meaningful word, and nothing of another person', async () => {
    expect(await memory.search('telegram:42', 'what is it', 3)).toEqual([]);
    expect(await memory.search('telegram:43', 'padel', 3)).toEqual([]);
  });
});
