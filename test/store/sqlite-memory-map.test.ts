import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/core/messages.js';
import { MMAP_BYTES, PAGE_CACHE_KIB } from '../../src/store/sqlite/db.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../support/engine.js';

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

/**
 * `hob start`'s store keeps SQLite's own 2 MB page cache (malloc'd memory that stays once
 * filled) and reads the rest of the file through a memory map (the OS's copy, given back
 * under pressure): its malloc'd part stops growing early in a long run of messages, and a
 * person's search of their past sessions still reads a file many times the cache.
 */
describe('the SQLite store’s page cache and memory map', () => {
  it('opens every file with the small cache and the map', () => {
    const store = openSqliteStore(join(tempDir('hob-sqlite-map-'), 'hob.db'), { clock: { now: () => Date.now() } });
    expect(store.db.pragma('cache_size', { simple: true })).toBe(-PAGE_CACHE_KIB);
    expect(PAGE_CACHE_KIB).toBeLessThanOrEqual(2_000);
    expect(store.db.pragma('mmap_size', { simple: true })).toBe(MMAP_BYTES);
    store.close();
  });

  it('finds a person’s old session in a file three times the cache, after a restart', () => {
    const path = join(tempDir('hob-sqlite-map-'), 'hob.db');
    let now = Date.UTC(2026, 0, 1);
    const clock = { now: () => now };
    const first = openSqliteStore(path, { clock });
    const filler = 'we talked about the weather and the week ahead and nothing much else '.repeat(300);
    const sessions = Math.ceil((3 * PAGE_CACHE_KIB * 1024) / filler.length);
    let boat = '';
    first.db.transaction(() => {
      for (let at = 0; at < sessions; at++) {
        const session = first.conversations.startSession(`chat-${at}`).id;
        const text = at === 3 ? `${filler} and then the sailing boat named Albatross` : filler;
        if (at === 3) boat = session;
        first.conversations.appendMessage(session, user(text), { personId: 'ann' });
        now += 60_000;
      }
    })();
    first.close();

    const again = openSqliteStore(path, { clock });
    expect(again.db.pragma('page_count', { simple: true }) as number).toBeGreaterThan((3 * PAGE_CACHE_KIB * 1024) / 4096);
    const hits = again.archive.search('ann', 'albatross boat');
    expect(hits.map((hit) => hit.sessionId)).toEqual([boat]);
    expect(hits[0]?.snippet).toContain('«Albatross»');
    expect(again.archive.list('ann', 1000)).toHaveLength(sessions);
    again.close();
  });
});
