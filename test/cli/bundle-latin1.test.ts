import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const dist = join(import.meta.dirname, '..', '..', 'dist');

/**
 * V8 keeps each loaded chunk's source for as long as hob runs, one byte a character only
 * while every character is Latin-1: one "—" or "✅" left in a regular expression (comments
 * are stripped by the build) doubles the memory its whole chunk holds. dist/ is built by
 * test/global-setup.ts.
 */
describe('the bundle hob runs', () => {
  it('holds no character beyond Latin-1, so V8 keeps its sources at one byte a character', () => {
    const chunks = readdirSync(dist).filter((name) => name.endsWith('.js'));
    expect(chunks.length).toBeGreaterThan(10);
    const wide = chunks.flatMap((name) => {
      const source = readFileSync(join(dist, name), 'utf8');
      const found = /[^\u0000-\u00ff]/u.exec(source);
      if (!found) return [];
      return [`${name}: ${JSON.stringify(source.slice(Math.max(0, found.index - 40), found.index + 10))} (write it as a \\u escape)`];
    });
    expect(wide).toEqual([]);
  });
});
