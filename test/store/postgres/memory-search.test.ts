import '../../support/env.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddingsClient, reciprocalRankFusion } from '../../../src/memory/embeddings.js';
import { PostgresBridge } from '../../../src/store/postgres/bridge.js';
import { nearestVectors, putVector, searchText, vectorSupport } from '../../../src/store/postgres/memory-search.js';
import { migratePostgres } from '../../../src/store/postgres/migrate.js';
import { startFakeEmbeddings } from '../../fakes/embeddings.js';
import { ENTRIES, QUESTIONS } from '../../memory/fixture.js';
import { insertEntries, postgresSkipReason, testDatabase } from '../../support/postgres.js';

const NOW = Date.UTC(2026, 11, 1);
const DAY = 86_400_000;

describe.skipIf(postgresSkipReason)(`memory search on PostgreSQL${postgresSkipReason ? ` (skipped: ${postgresSkipReason})` : ''}`, () => {
  let bridge: PostgresBridge;
  const search = (personId: string, question: string, limit = 3) => searchText(bridge, personId, question, limit, { now: NOW });
  const contents = (personId: string, question: string, limit = 3) => search(personId, question, limit).map((hit) => hit.entry.content);

  beforeAll(async () => {
    bridge = new PostgresBridge({ url: (await testDatabase()).url });
    migratePostgres(bridge);
    insertEntries(bridge, 'telegram:42', Object.entries(ENTRIES).map(([key, content], index) => ({ id: key, content, updatedAt: NOW - index * DAY })));
  });
  afterAll(() => bridge?.close());

  // The same table of plain-word questions the SQLite store passes (test/memory/search-quality.test.ts).
  it.each(QUESTIONS)('"%s" finds its entry in the top 3', (question, key) => {
    expect(contents('telegram:42', question)).toContain(ENTRIES[key]);
  });

  it('finds nothing for a question with no meaningful word, and nothing of another person', () => {
    expect(search('telegram:42', 'what is it')).toEqual([]);
    expect(search('telegram:43', 'padel')).toEqual([]);
    const [hit] = search('telegram:42', 'padel');
    expect(hit?.entry).toMatchObject({ id: 'padel', personId: 'telegram:42', content: ENTRIES.padel, tags: [], source: 'tool', useCount: 0 });
  });

  it('matches the start of a name, and other forms of a word in English, German, Italian, French and Spanish', () => {
    insertEntries(bridge, 'slack:U1', [
      { id: 'e1', content: 'Wir spielen jeden Donnerstag Tennis mit den Kollegen', updatedAt: NOW },
      { id: 'e2', content: 'Playing chess online every evening', updatedAt: NOW },
      { id: 'e3', content: 'Le dossier des impôts est chez Maître Dubois', updatedAt: NOW },
      { id: 'e4', content: 'Las llaves del coche están en el cajón', updatedAt: NOW },
      { id: 'e5', content: 'Le bollette arrivano ogni due mesi', updatedAt: NOW },
    ]);
    expect(contents('slack:U1', 'wann spiele ich tennis', 1)).toEqual(['Wir spielen jeden Donnerstag Tennis mit den Kollegen']);
    expect(contents('slack:U1', 'when do I play chess', 1)).toEqual(['Playing chess online every evening']);
    expect(contents('slack:U1', 'où sont les dossiers', 1)).toEqual(['Le dossier des impôts est chez Maître Dubois']);
    expect(contents('slack:U1', 'dónde está la llave', 1)).toEqual(['Las llaves del coche están en el cajón']);
    expect(contents('slack:U1', 'quando arriva la bolletta', 1)).toEqual(['Le bollette arrivano ogni due mesi']);
    expect(contents('slack:U1', 'Dubo', 1)).toEqual(['Le dossier des impôts est chez Maître Dubois']);
  });

  it('ranks a rare word over a common one, the title over the text, and the recent over the old', () => {
    const person = 'discord:7';
    insertEntries(bridge, person, [
      ...Array.from({ length: 30 }, (_, n) => ({ id: `common${n}`, content: `Meeting notes number ${n}`, updatedAt: NOW - 200 * DAY })),
      { id: 'rare', content: 'Notes on the zeppelin museum trip', updatedAt: NOW - 200 * DAY },
      { id: 'titled', title: 'Sourdough', content: 'Feed it twice a day', updatedAt: NOW - 200 * DAY },
      { id: 'mentioned', content: 'Bought flour for the sourdough starter', updatedAt: NOW - 200 * DAY },
      { id: 'old', content: 'The violin lesson moved to Tuesday', updatedAt: NOW - 300 * DAY },
      { id: 'new', content: 'The violin lesson moved to Friday', updatedAt: NOW - DAY },
    ]);
    expect(search(person, 'meeting notes zeppelin', 1)[0]?.entry.id).toBe('rare');
    expect(search(person, 'sourdough', 2).map((hit) => hit.entry.id)).toEqual(['titled', 'mentioned']);
    expect(search(person, 'violin lesson', 2).map((hit) => hit.entry.id)).toEqual(['new', 'old']);
    // A use not yet written counts as recent use.
    const oldSeq = search(person, 'violin lesson tuesday', 3).find((hit) => hit.entry.id === 'old')?.seq;
    expect(searchText(bridge, person, 'violin lesson', 2, { now: NOW, pendingUseAt: (seq) => (seq === oldSeq ? NOW : undefined) }).map((hit) => hit.entry.id)).toEqual(['old', 'new']);
  });

  it('finds an entry that shares no word with the question by fusing the vector ranking, and never another person’s vectors', async () => {
    const fake = await startFakeEmbeddings({ groups: [['gift', 'present', 'delight', 'happy', 'collect', 'vintage', 'fountain', 'pen'], ['brother', 'marco', 'sibling']], apiKey: 'emb-key' });
    try {
      const embed = embeddingsClient({ baseUrl: fake.baseUrl, model: 'fake-embed', apiKey: 'emb-key' });
      const person = 'telegram:99';
      const texts = ['Marco collects vintage fountain pens', 'Buy a birthday cake for the office party', 'What would really help: a quieter desk'];
      const seqs = insertEntries(bridge, person, texts.map((content, n) => ({ id: `v${n}`, content, updatedAt: NOW })));
      const vectors = await embed(texts);
      seqs.forEach((seq, n) => putVector(bridge, seq, person, vectors[n] as Float32Array));
      const [otherSeq] = insertEntries(bridge, 'telegram:98', [{ id: 'other', content: 'Marco collects vintage fountain pens', updatedAt: NOW }]);
      putVector(bridge, otherSeq as number, 'telegram:98', vectors[0] as Float32Array);

      const question = 'what present would delight my brother';
      expect(search(person, question)).toEqual([]);
      const [questionVector] = await embed([question]);
      const nearest = nearestVectors(bridge, person, questionVector as Float32Array, 20);
      expect(nearest).not.toContain(otherSeq);
      const fused = reciprocalRankFusion([search(person, question, 20).map((hit) => hit.seq), nearest]);
      expect(fused[0]).toBe(seqs[0]);
      // Deleting the entry deletes its vector.
      bridge.query('DELETE FROM memory_entries WHERE seq = $1', [seqs[0] as number]);
      expect(nearestVectors(bridge, person, questionVector as Float32Array, 20)).not.toContain(seqs[0]);
      expect(vectorSupport(bridge)).toBe('arrays');
    } finally {
      await fake.close();
    }
  });
});
