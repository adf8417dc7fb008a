import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runMemory } from '../../src/cli/memory.js';
import { consoleUserId } from '../../src/cli/console-identity.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { exportMarkdown, importMarkdown } from '../../src/memory/markdown.js';
import { tempDir } from '../support/engine.js';
import { testMemory } from './fixture.js';

describe('people: linked identities', () => {
  it('a code from one platform joins another identity to the same person, with its memory; unlinking separates them', () => {
    let now = 1_000_000;
    const { memory } = testMemory({ clock: { now: () => now } });
    memory.save('slack:U1', { content: 'Slack-side fact: the wiki is at wiki.acme.io', source: 'tool' });
    const code = memory.people.createLinkCode(memory.personFor('telegram:42', '42'));
    expect(code).toMatch(/^\d{6}$/);

    expect(memory.people.redeem('000000' === code ? '111111' : '000000', 'slack', 'U1')).toMatchObject({ ok: false });
    expect(memory.people.redeem(code, 'slack', 'U1')).toEqual({ ok: true, personId: 'telegram:42' });
    expect(memory.personFor('slack:T1:C1', 'U1')).toBe('telegram:42');
    // What the Slack identity had saved came along.
    expect(memory.entries.list('telegram:42').map((entry) => entry.content)).toEqual(['Slack-side fact: the wiki is at wiki.acme.io']);
    // A code works once.
    expect(memory.people.redeem(code, 'discord', '7')).toMatchObject({ ok: false });

    // An expired code does nothing.
    const late = memory.people.createLinkCode('telegram:42');
    now += 11 * 60_000;
    expect(memory.people.redeem(late, 'discord', '7')).toMatchObject({ ok: false, reason: expect.stringContaining('expired') });

    expect(memory.people.unlink('telegram', '42')).toMatchObject({ ok: false });
    expect(memory.people.unlink('slack', 'U1')).toEqual({ ok: true, personId: 'slack:U1' });
    expect(memory.personFor('slack:T1', 'U1')).toBe('slack:U1');
    expect(memory.entries.count('slack:U1')).toBe(0);
    expect(memory.entries.count('telegram:42')).toBe(1);
  });

  it('stops an identity that keeps trying wrong codes, so a code cannot be guessed', () => {
    const { memory } = testMemory();
    const code = memory.people.createLinkCode('telegram:42');
    const wrong = code === '123456' ? '654321' : '123456';
    for (let n = 0; n < 5; n++) expect(memory.people.redeem(wrong, 'telegram', '66')).toMatchObject({ ok: false, reason: expect.stringContaining('unknown') });
    expect(memory.people.redeem(code, 'telegram', '66')).toMatchObject({ ok: false, reason: expect.stringContaining('Too many wrong codes') });
    expect(memory.personFor('telegram:66', '66')).toBe('telegram:66');
    // The guesses also spent the code; its issuer makes a new one, and others are not locked out.
    expect(memory.people.redeem(code, 'slack', 'U1')).toMatchObject({ ok: false });
    expect(memory.people.redeem(memory.people.createLinkCode('telegram:42'), 'slack', 'U1')).toMatchObject({ ok: true });
  });

  it("never reaches another person's entry by id: search, forget and get all say not found", async () => {
    const { memory } = testMemory();
    const ann = memory.save('telegram:42', { content: 'Ann: the safe code is 1234', source: 'tool' }).entry;
    expect(memory.entries.get('telegram:43', ann.id)).toBeUndefined();
    expect(memory.forget('telegram:43', ann.id)).toBe(false);
    expect(await memory.search('telegram:43', 'safe code', 5)).toEqual([]);
    expect(memory.entries.get('telegram:42', ann.id)?.content).toBe('Ann: the safe code is 1234');
  });
});

describe('export and import', () => {
  it('writes MEMORY.md and one Markdown file per entry, and reads them back without loss', async () => {
    const { memory } = testMemory();
    memory.save('telegram:42', { content: 'Padel with Jonas every Thursday at 19:00, court 3', title: 'Padel', tags: ['sport', 'weekly'], source: 'tool' });
    memory.save('telegram:42', { content: 'Line one\n\n---\nA "quoted" line: with colons, and a trailing newline\n', source: 'command' });
    memory.save('telegram:42', { content: 'yes', title: 'no', source: 'extracted' });
    await memory.search('telegram:42', 'padel', 1);
    const before = memory.entries.list('telegram:42');

    const dir = tempDir('hob-export-');
    exportMarkdown(dir, 'telegram:42', before);
    const index = readFileSync(join(dir, 'MEMORY.md'), 'utf8');
    expect(index).toContain(`[Padel](entries/${before.find((entry) => entry.title === 'Padel')?.id}.md)`);

    const other = testMemory().memory;
    for (const entry of importMarkdown(dir)) other.entries.restore('telegram:42', entry);
    const byId = (entries: typeof before) => [...entries].sort((a, b) => a.id.localeCompare(b.id));
    expect(byId(other.entries.list('telegram:42'))).toEqual(byId(before));
    // Importing again replaces, it does not duplicate.
    for (const entry of importMarkdown(dir)) other.entries.restore('telegram:42', entry);
    expect(other.entries.count('telegram:42')).toBe(3);
    expect(other.entries.searchText('telegram:42', 'jonas padel', 1)[0]?.entry.title).toBe('Padel');
  });

  it('names the file and the problem when an entry file is broken', () => {
    const dir = tempDir('hob-import-');
    mkdirSync(join(dir, 'entries'));
    writeFileSync(join(dir, 'entries', 'x.md'), '---\nid: x\nsource: telepathy\n---\nhello');
    expect(() => importMarkdown(dir)).toThrow(/x\.md: "source" must be one of tool, command, extracted, import/);
    expect(() => importMarkdown(join(dir, 'nope'))).toThrow(/does not exist/);
  });

  it('hob memory list | search | export | import work for the person at the terminal', async () => {
    const dataDir = tempDir('hob-cli-mem-');
    const config = parseHobConfig(`data_dir: ${dataDir}\nmodel: { api_key: test }\n`, { env: {} });
    const run = async (verb: string, value?: string, flags = {}) => {
      const out = new PassThrough();
      let text = '';
      out.on('data', (chunk: Buffer) => (text += chunk.toString()));
      await runMemory(config, verb, value, flags, out);
      return text;
    };
    const seeded = testMemory({ dir: dataDir });
    seeded.memory.save(`console:${consoleUserId()}`, { content: 'The boiler service is due in March', source: 'command' });
    seeded.memory.save('telegram:42', { content: 'Someone else: boiler at the lake house', source: 'tool' });
    seeded.db.close();

    expect(await run('list')).toContain('The boiler service is due in March');
    expect(await run('list')).not.toContain('lake house');
    expect(await run('search', 'when is the boiler service')).toContain('The boiler service is due in March');
    expect(await run('list', undefined, { person: 'telegram:42' })).toContain('lake house');
    const exportDir = join(tempDir('hob-cli-exp-'), 'memory');
    expect(await run('export', exportDir)).toContain('Wrote 1 entries');
    expect(await run('import', exportDir, { person: 'discord:9' })).toContain('Imported 1 entries for discord:9');
    expect(await run('list', undefined, { person: 'discord:9' })).toContain('The boiler service is due in March');
    await expect(run('list', undefined, { limit: 'ten' })).rejects.toThrow('--limit must be a whole number from 1, not "ten" (e.g. --limit 20).');
  });
});

describe('forgetting', () => {
  it('/forget all leaves nothing of the person in the table or the full-text index', () => {
    const { memory, db } = testMemory();
    for (let n = 0; n < 5; n++) memory.save('telegram:42', { content: `Secret number ${n}: zebra${n} marmalade`, source: 'tool' });
    memory.save('telegram:43', { content: 'Bob keeps his marmalade', source: 'tool' });
    expect(memory.forgetAll('telegram:42')).toBe(5);
    expect(db.prepare("SELECT count(*) AS n FROM memory_fts WHERE memory_fts MATCH 'zebra0 OR zebra4 OR secret'").get()).toEqual({ n: 0 });
    expect(db.prepare("SELECT count(*) AS n FROM memory_fts WHERE memory_fts MATCH 'marmalade'").get()).toEqual({ n: 1 });
    expect(db.prepare("SELECT count(*) AS n FROM memory_entries WHERE person_id = 'telegram:42'").get()).toEqual({ n: 0 });
  });
});
