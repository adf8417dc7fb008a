import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const dist = join(import.meta.dirname, '..', '..', 'dist');

/**
 * The packages dist/ still looks up in node_modules when it runs: the optional helpers the
 * libraries try and do without (better-sqlite3's JavaScript is bundled; its native addon is
 * handed to it by path, src/core/sqlite-addon.ts).
 * Any other package a chunk require()s at run time is resolved on disk and compiled a second
 * time at each start, beside the copy in the bundle (fdir did so for picomatch). dist/ is
 * built by test/global-setup.ts.
 */
const LOOKED_UP = ['bufferutil', 'encoding', 'pg-native', 'utf-8-validate', 'zlib-sync'];

describe('the bundle hob runs', () => {
  it('requires no package at run time but optional helpers', () => {
    const required = new Set<string>();
    for (const name of readdirSync(dist).filter((file) => file.endsWith('.js'))) {
      const source = readFileSync(join(dist, name), 'utf8');
      for (const match of source.matchAll(/__require(?:\.resolve)?\("([^"]+)"\)|(?:^|[;\n])import\s*(?:[\w$*{},\s]+from\s*)?"([^".][^"]*)"/g)) {
        const specifier = (match[1] ?? match[2]) as string;
        if (!isBuiltin(specifier) && !specifier.startsWith('node:')) required.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] as string));
      }
    }
    expect([...required].sort()).toEqual(LOOKED_UP);
  });
});
