/**
 * The PostgreSQL store's costs, on a throwaway local cluster (test/support/postgres.ts): one
 * round trip through the synchronous bridge (worker thread + Atomics.wait + loopback TCP),
 * memory_search latency for one person holding 10,000 and 100,000 entries (full-text, the
 * same corpus and questions as bench/memory.ts on SQLite), and the vector ranking in hob over
 * real[] rows (768 dimensions) at a person-sized memory. Without PostgreSQL it says why and
 * measures nothing.
 */
import { PostgresBridge } from '../src/store/postgres/bridge.js';
import { nearestVectors, putVector, searchText } from '../src/store/postgres/memory-search.js';
import { migratePostgres } from '../src/store/postgres/migrate.js';
import { createDatabase, insertEntries, postgresSkipReason, startCluster, stopCluster, type TestEntry } from '../test/support/postgres.js';
import { memoryCorpus } from './memory-corpus.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const ROUND_TRIPS = 2000;
const SIZES = [10_000, 100_000];
const QUERIES = 500;
const VECTOR_SIZES = [1000, 10_000];
const VECTOR_QUERIES = 50;
const DIMENSIONS = 768;
const PERSON = 'telegram:42';
const FILL_BATCH = 2000;

function timeMs(samples: number[], work: () => unknown): void {
  const started = performance.now();
  work();
  samples.push(performance.now() - started);
}

export async function run(): Promise<BenchResult> {
  if (postgresSkipReason) {
    const line = `postgres: not measured (${postgresSkipReason})`;
    console.log(line);
    return { name: 'postgres', summary: [line] };
  }
  const summary: string[] = [];
  const say = (line: string) => {
    console.log(line);
    summary.push(line);
  };
  const { sentence, question, unitVector, rand } = memoryCorpus();
  const cluster = await startCluster();
  // Filling 100,000 entries runs long statements; searches are what is measured.
  const bridge = new PostgresBridge({ url: await createDatabase(cluster), statementTimeoutMs: 120_000 });
  try {
    migratePostgres(bridge);

    for (let n = 0; n < 200; n++) bridge.query('SELECT 1');
    const plain: number[] = [];
    for (let n = 0; n < ROUND_TRIPS; n++) timeMs(plain, () => bridge.query('SELECT $1::int AS n', [n]));
    const written: number[] = [];
    bridge.exec('CREATE TABLE bench_rows (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body TEXT NOT NULL, at BIGINT NOT NULL)');
    for (let n = 0; n < ROUND_TRIPS; n++) timeMs(written, () => bridge.query('INSERT INTO bench_rows (body, at) VALUES ($1, $2) RETURNING id', [`row ${n}`, n]));
    say(
      `postgres bridge round trip (SELECT 1 row): median ${fmt(median(plain) * 1000)} µs, p99 ${fmt(percentile(plain, 0.99) * 1000)} µs; INSERT … RETURNING: median ${fmt(median(written) * 1000)} µs, p99 ${fmt(percentile(written, 0.99) * 1000)} µs`,
    );

    let held = 0;
    const now = Date.now();
    for (const size of SIZES) {
      const filling = performance.now();
      while (held < size) {
        const batch: TestEntry[] = [];
        for (; held < size && batch.length < FILL_BATCH; held++) {
          batch.push({ id: `e${held}`, content: sentence(8 + Math.floor(rand() * 12)), updatedAt: now - held * 60_000, useCount: held % 7 });
        }
        insertEntries(bridge, PERSON, batch);
      }
      bridge.exec('ANALYZE memory_entries');
      const fillSeconds = (performance.now() - filling) / 1000;
      for (let n = 0; n < 50; n++) searchText(bridge, PERSON, question(), 20, { now });
      const searchMs: number[] = [];
      for (let n = 0; n < QUERIES; n++) timeMs(searchMs, () => searchText(bridge, PERSON, question(), 20, { now }));
      say(
        `postgres memory_search at ${size.toLocaleString('en-US')} entries (full-text): median ${fmt(median(searchMs))} ms, p99 ${fmt(percentile(searchMs, 0.99))} ms (filled in ${fmt(fillSeconds)} s)`,
      );
    }

    // Vectors for a second person, so the ranking reads a person-sized memory.
    const vectorPerson = 'slack:U1';
    let stored = 0;
    for (const size of VECTOR_SIZES) {
      const seqs = insertEntries(
        bridge,
        vectorPerson,
        Array.from({ length: size - stored }, (_, n) => ({ id: `v${stored + n}`, content: sentence(6), updatedAt: now })),
      );
      bridge.transaction(() => {
        for (const seq of seqs) putVector(bridge, seq, vectorPerson, unitVector(DIMENSIONS));
      });
      stored = size;
      const vectorMs: number[] = [];
      for (let n = 0; n < VECTOR_QUERIES; n++) {
        const query = unitVector(DIMENSIONS);
        timeMs(vectorMs, () => nearestVectors(bridge, vectorPerson, query, 20));
      }
      say(`postgres vector ranking in hob at ${size.toLocaleString('en-US')} entries (${DIMENSIONS} dimensions, real[]): median ${fmt(median(vectorMs))} ms, p99 ${fmt(percentile(vectorMs, 0.99))} ms`);
    }
    return { name: 'postgres', summary };
  } finally {
    bridge.close();
    stopCluster(cluster);
  }
}

runIfMain(import.meta.url, run);
