/**
 * Long-term memory: memory_search latency for one person holding 100, 10,000 and 100,000
 * entries (full-text; target p99 under 5 ms at 100,000), the vector search's own figure with
 * 768-dimension vectors (sqlite-vec, brute force per person), the cost of memory_save (with
 * its "already known?" check), and the time to build the system-prompt snapshot.
 * Entries and questions come from bench/memory-corpus.ts (a Zipf spread over one vocabulary).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger } from '../src/logger.js';
import { Memory } from '../src/memory/memory.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import { tempDir } from '../test/support/engine.js';
import { memoryCorpus } from './memory-corpus.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const SIZES = [100, 10_000, 100_000];
const QUERIES = 500;
const VECTOR_SIZES = [10_000, 100_000];
const VECTOR_QUERIES = 50;
const RECALL_AT = 10_000;
const DIMENSIONS = 768;
const SAVES = 500;
const PERSON = 'telegram:42';

const { sentence, question, unitVector: randomVector, rand } = memoryCorpus();
const unitVector = () => randomVector(DIMENSIONS);

function timeMs(samples: number[], work: () => unknown): void {
  const started = performance.now();
  work();
  samples.push(performance.now() - started);
}

async function timeMsAsync(samples: number[], work: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  await work();
  samples.push(performance.now() - started);
}

export async function run(): Promise<BenchResult> {
  const summary: string[] = [];
  const dir = tempDir('hob-bench-memory-');
  const store = openSqliteStore(join(dir, 'hob.db'), { clock: { now: () => Date.now() } });
  const db = store.db;
  const memory = new Memory({ store, clock: { now: () => Date.now() }, logger: createLogger({ level: 'silent', destination: 'silent' }), dataDir: dir, defaultTimezone: 'UTC', snapshotChars: 2000, extract: 'off' });
  try {
    let held = 0;
    const fill = (count: number) => {
      const now = Date.now();
      db.transaction(() => {
        for (; held < count; held++) {
          memory.entries.restore(PERSON, { id: `e${held}`, content: sentence(8 + Math.floor(rand() * 12)), tags: [], source: 'tool', createdAt: now - held * 60_000, updatedAt: now - held * 60_000, useCount: held % 7 });
        }
      })();
    };
    for (const size of SIZES) {
      fill(size);
      for (let n = 0; n < 50; n++) await memory.search(PERSON, question());
      const searchMs: number[] = [];
      for (let n = 0; n < QUERIES; n++) await timeMsAsync(searchMs, () => memory.search(PERSON, question()));
      const snapshotMs: number[] = [];
      for (let n = 0; n < 100; n++) timeMs(snapshotMs, () => memory.snapshot(PERSON));
      const line = `memory_search at ${size.toLocaleString('en-US')} entries (full-text): median ${fmt(median(searchMs))} ms, p99 ${fmt(percentile(searchMs, 0.99))} ms; snapshot build median ${fmt(median(snapshotMs))} ms`;
      console.log(line);
      summary.push(line);
    }

    // memory_save: each save first checks whether the fact is already known (at 100,000 entries).
    const saveMs: number[] = [];
    for (let n = 0; n < SAVES; n++) timeMs(saveMs, () => memory.save(PERSON, { content: sentence(10), source: 'tool' }));
    const saveLine = `memory_save at ${held.toLocaleString('en-US')} entries: median ${fmt(median(saveMs))} ms, p99 ${fmt(percentile(saveMs, 0.99))} ms`;
    console.log(saveLine);
    summary.push(saveLine);

    const vectors = store.vectors();
    if (!vectors) throw new Error(JSON.stringify(store.vectorSupport()));
    let stored = 0;
    const kept: Float32Array[] = [];
    for (const size of VECTOR_SIZES) {
      db.transaction(() => {
        for (; stored < size; stored++) {
          const vector = unitVector();
          if (stored < RECALL_AT) kept.push(vector);
          vectors.put(stored + 1, PERSON, vector);
        }
      })();
      const vectorMs: number[] = [];
      let found = 0;
      for (let n = 0; n < VECTOR_QUERIES; n++) {
        const query = unitVector();
        let nearest: number[] = [];
        timeMs(vectorMs, () => (nearest = vectors.nearest(PERSON, query, 10)));
        if (size === RECALL_AT) {
          // Exact top 10 by brute force in JS: how many of them the bit scan + rescoring found.
          const exact = kept.map((vector, index) => ({ seq: index + 1, dot: vector.reduce((sum, value, i) => sum + value * (query[i] as number), 0) })).sort((a, b) => b.dot - a.dot).slice(0, 10);
          found += exact.filter((hit) => nearest.includes(hit.seq)).length;
        }
      }
      const recall = size === RECALL_AT ? `; recall@10 ${((100 * found) / (10 * VECTOR_QUERIES)).toFixed(0)}% on random vectors (the worst case for bits)` : '';
      const line = `vector search at ${size.toLocaleString('en-US')} entries (${DIMENSIONS} dimensions, sqlite-vec): median ${fmt(median(vectorMs))} ms, p99 ${fmt(percentile(vectorMs, 0.99))} ms${recall}`;
      console.log(line);
      summary.push(line);
    }
    return { name: 'memory', summary };
  } finally {
    memory.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, run);
