import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readFrontMatterFile } from '../../src/core/front-matter.js';
import { oneByte } from '../../src/core/text.js';
import { tempDir } from '../support/engine.js';

/** How V8 holds the string: one byte a character, or two (the serializer's tag says it). */
const width = (text: string) => (serialize(text)[2] === 0x22 ? 'one byte' : 'two bytes');

/**
 * A skill's description goes into every system prompt, and so into every model request's
 * JSON. Read from a file with one character beyond Latin-1 anywhere in it, it used to stay two
 * bytes a character though it held only ASCII, and so did the whole prompt and request built
 * from it: twice the memory for each request's body, made and copied per message.
 */
describe('text kept from files, one byte a character', () => {
  it('a skill description read from a file with an em dash elsewhere', () => {
    const path = join(tempDir('hob-one-byte-'), 'SKILL.md');
    writeFileSync(path, '---\nname: notes\ndescription: Keep short notes of what was said\ntags: [daily, short]\n---\n\nWrite the notes — one line each.\n');
    const { data, body } = readFrontMatterFile(path, z.object({ name: z.string(), description: z.string(), tags: z.array(z.string()) }), 'name:, description:');
    expect(data).toEqual({ name: 'notes', description: 'Keep short notes of what was said', tags: ['daily', 'short'] });
    expect([data.name, data.description, ...data.tags].map(width)).toEqual(['one byte', 'one byte', 'one byte', 'one byte']);
    // The body holds the dash itself: as it was, whole.
    expect(body).toBe('Write the notes — one line each.');
    expect(JSON.stringify({ system: `${data.name}: ${data.description}`, tools: 'x'.repeat(20_000) })).toSatisfy((json: string) => width(json) === 'one byte');
  });

  it('keeps every character, and leaves text beyond Latin-1 as it is', () => {
    const twoByteAscii = 'plain words — cut'.slice(0, 11);
    expect(width(twoByteAscii)).toBe('two bytes');
    expect(oneByte(twoByteAscii)).toBe('plain words');
    expect(width(oneByte(twoByteAscii))).toBe('one byte');
    expect(oneByte('café, naïve')).toBe('café, naïve');
    expect(oneByte('em — dash')).toBe('em — dash');
    expect(oneByte('')).toBe('');
  });
});
