import { describe, expect, it } from 'vitest';
import { testMemory } from './fixture.js';

describe('uses found by searches', () => {
  it('count at once (the snapshot puts the most used first), and are on disk after hob closes', async () => {
    let now = 1_000_000;
    const { memory, db, dir } = testMemory({ extract: 'off', clock: { now: () => now } });
    const padel = memory.save('telegram:42', { content: 'Padel with Jonas every Thursday', source: 'tool' }).entry;
    for (let n = 0; n < 5; n++) memory.save('telegram:42', { content: `Later fact ${n} about the garden`, source: 'tool' });
    now += 60_000;
    await memory.search('telegram:42', 'padel', 1);
    await memory.search('telegram:42', 'when is padel', 1);

    expect(memory.entries.get('telegram:42', padel.id)).toMatchObject({ useCount: 2, lastUsedAt: now });
    expect(memory.snapshot('telegram:42').split('\n')[0]).toBe(`- [${padel.id}] Padel with Jonas every Thursday`);
    await memory.search('telegram:42', 'padel', 1);
    memory.close();
    db.close();

    const reopened = testMemory({ dir, extract: 'off' });
    expect(reopened.memory.entries.get('telegram:42', padel.id)).toMatchObject({ useCount: 3, lastUsedAt: now });
    reopened.memory.close();
    reopened.db.close();
  });

  it('put the most used first whether the person has a few entries or more than a snapshot reads', async () => {
    let now = 1_000_000;
    const { memory, db } = testMemory({ extract: 'off', clock: { now: () => now } });
    for (const [person, others] of [['telegram:1', 3], ['telegram:2', 60]] as const) {
      const used = memory.save(person, { content: 'The spare key is under the blue flowerpot', source: 'tool' }).entry;
      const twice = memory.save(person, { content: 'The boiler service is on Thursday', source: 'tool' }).entry;
      for (let n = 0; n < others; n++) memory.save(person, { content: `Later fact ${n} about the garden shed`, source: 'tool' });
      now += 60_000;
      await memory.search(person, 'spare key flowerpot', 1);
      await memory.search(person, 'boiler service', 1);
      await memory.search(person, 'boiler thursday', 1);
      const lines = memory.snapshot(person).split('\n');
      expect(lines.slice(0, 2)).toEqual([`- [${twice.id}] The boiler service is on Thursday`, `- [${used.id}] The spare key is under the blue flowerpot`]);
    }
    memory.close();
    db.close();
  });
});
