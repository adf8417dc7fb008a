import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { text } from '../../src/core/messages.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../support/engine.js';
import { migratedDbFile } from '../support/migrated-db.js';

/**
 * Session search's index takes messages in batches (src/store/sqlite/message-index.ts): a
 * message's search row is written with the message and reaches the index a moment later. What
 * a person notices must not change: a search finds what was just said, also after hob was
 * killed before the batch went in, and a link carries the waiting rows to the linked person.
 */
let store: SqliteStore | undefined;
afterEach(() => {
  store?.close();
  store = undefined;
});

function open(path: string): SqliteStore {
  store = openSqliteStore(migratedDbFile(path), { clock: systemClock });
  return store;
}

function say(on: SqliteStore, sessionKey: string, personId: string, words: string): void {
  const session = on.conversations.activeSession(sessionKey);
  on.conversations.appendMessage(session.id, { role: 'user', content: [text(words)] }, { personId, run: 'starts' });
  on.conversations.appendMessage(session.id, { role: 'assistant', content: [text(`Noted: ${words}`)] }, { personId, run: 'ends' });
}

const found = (on: SqliteStore, personId: string, query: string) => on.archive.search(personId, query).map((hit) => hit.snippet);

describe('the messages\' search index, written in batches', () => {
  it('finds a message the moment it is stored', () => {
    const hob = open(join(tempDir('hob-msg-index-'), 'hob.db'));
    say(hob, 'telegram:1', 'telegram:1', 'the spare key is under the blue flowerpot');
    expect(found(hob, 'telegram:1', 'where is the spare key?').join(' ')).toContain('flowerpot');
    expect(found(hob, 'telegram:2', 'spare key flowerpot')).toEqual([]);
  });

  it('still finds what was said when hob was killed before the batch reached the index', () => {
    const path = join(tempDir('hob-msg-index-'), 'hob.db');
    const killed = open(path);
    say(killed, 'telegram:1', 'telegram:1', 'the boiler service is booked for Thursday');
    killed.db.close(); // a kill: no close(), nothing moved after the message's own commit
    store = undefined;

    const again = open(path);
    const hits = found(again, 'telegram:1', 'when is the boiler service?');
    expect(hits.join(' ')).toContain('Thursday');
    // Each message once: the user's and the answer, not twice after the move.
    expect(hits).toHaveLength(2);
    expect(found(again, 'telegram:2', 'boiler service Thursday')).toEqual([]);
  });

  it('gives rows still waiting to the person an identity is linked to', () => {
    const hob = open(join(tempDir('hob-msg-index-'), 'hob.db'));
    say(hob, 'slack:U9', 'slack:U9', 'my bike lock code is four digits');
    const code = hob.people.newLinkCode('telegram:1', () => '123456', Date.now(), Date.now() + 60_000);
    hob.people.join(code, 'slack', 'U9', 'slack:U9', 'telegram:1', Date.now());
    expect(found(hob, 'telegram:1', 'bike lock code').join(' ')).toContain('is four digits');
    expect(found(hob, 'slack:U9', 'bike lock code')).toEqual([]);
  });
});
