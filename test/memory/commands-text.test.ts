import { describe, expect, it } from 'vitest';
import { runMemoryCommand } from '../../src/gateway/commands/memory.js';
import { testMemory } from './fixture.js';

/** The memory commands where there are no buttons (the terminal): everything by typing. */
describe('memory commands without buttons', () => {
  const terminal = { platform: 'console', userId: 'ann', private: true, buttons: false, trusted: true };

  it('pages /memory, confirms /forget all by typing, and keeps other people out', () => {
    const { memory, db } = testMemory();
    for (let n = 1; n <= 7; n++) runMemoryCommand(memory, 'remember', `note number ${n} about the attic`, terminal);
    memory.save('telegram:42', { content: 'Bob: the attic key', source: 'tool' });

    const first = runMemoryCommand(memory, 'memory', '', terminal).text;
    expect(first).toContain('What I remember about you (7; page 1 of 2)');
    expect(first).toContain('More: /memory 2.');
    expect(runMemoryCommand(memory, 'memory', '2', terminal).text).toContain('note number 1 about the attic');
    expect(first).not.toContain('Bob');

    expect(runMemoryCommand(memory, 'forget', 'all', terminal).text).toBe('Forget all 7 entries I remember about you? This cannot be undone. Send /forget all yes to confirm.');
    expect(memory.entries.count('console:ann')).toBe(7);
    expect(runMemoryCommand(memory, 'forget', 'all yes', terminal).text).toContain('Forgot all 7 entries');
    expect(db.prepare("SELECT count(*) AS n FROM memory_fts WHERE memory_fts MATCH 'attic'").get()).toEqual({ n: 1 });
    expect(runMemoryCommand(memory, 'memory', '', terminal).text).toContain('I do not remember anything about you yet');
  });

  it('shows a link code only in a private chat', () => {
    const { memory } = testMemory();
    const inGroup = { platform: 'telegram', userId: '42', private: false, buttons: true, trusted: true };
    expect(runMemoryCommand(memory, 'link', '', inGroup).text).toContain('private chat');
    expect(runMemoryCommand(memory, 'link', '', { ...inGroup, private: true }).text).toMatch(/Your link code is \d{6}/);
  });

  it('/settings shows, sets and clears a field, and explains a bad one', () => {
    const { memory } = testMemory();
    expect(runMemoryCommand(memory, 'settings', 'style short answers, no emoji', terminal).text).toBe('Your style is now short answers, no emoji.');
    expect(runMemoryCommand(memory, 'settings', '', terminal).text).toContain('style: short answers, no emoji');
    expect(runMemoryCommand(memory, 'settings', 'style -', terminal).text).toBe('Cleared your style.');
    expect(runMemoryCommand(memory, 'settings', 'colour blue', terminal).text).toBe('Unknown setting "colour". Fields: name, timezone, language, style, notes.');
    expect(runMemoryCommand(memory, 'remember', '', terminal).text).toContain('Usage: /remember TEXT');
  });
});
