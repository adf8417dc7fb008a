/**
 * What appending one message costs when the conversation is short versus long. hob appends
 * one row per message and never rewrites the history, so the ratio should stay near 1.
 * Both conversations live in the same SQLite file (as in a real hob), and the timed appends
 * alternate between them so drift (WAL growth, checkpoints, CPU frequency) hits both alike.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../src/core/clock.js';
import type { Message } from '../src/core/messages.js';
import { SqliteConversations } from '../src/store/sqlite/conversations.js';
import { openDatabase } from '../src/store/sqlite/db.js';
import { tempDir } from '../test/support/engine.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const SHORT = 10;
const LONG = 10_000;
const TIMED_APPENDS = 1_000;
const WARMUP_APPENDS = 200;

/** A typical chat line, about 200 characters once serialised. */
const message = (n: number): Message => ({
  role: n % 2 === 0 ? 'user' : 'assistant',
  content: [{ type: 'text', text: `Message ${n}: could you check whether the nightly backup finished and tell me how long it took?` }],
});

export async function run(): Promise<BenchResult> {
  const dir = tempDir('hob-bench-append-');
  const db = openDatabase(join(dir, 'hob.db'));
  try {
    const conversations = new SqliteConversations(db, systemClock);
    const short = conversations.activeSession('bench:short').id;
    const long = conversations.activeSession('bench:long').id;
    // Pre-fill through the same public method (one transaction, only to save time).
    db.transaction(() => {
      for (let n = 0; n < SHORT; n++) conversations.appendMessage(short, message(n));
      for (let n = 0; n < LONG; n++) conversations.appendMessage(long, message(n));
    })();
    // Warm up on throwaway sessions so the measured ones keep their sizes.
    const scratch = conversations.activeSession('bench:scratch').id;
    for (let n = 0; n < WARMUP_APPENDS; n++) conversations.appendMessage(scratch, message(n));

    const shortUs: number[] = [];
    const longUs: number[] = [];
    const timeAppend = (sessionId: string, n: number, into: number[]) => {
      const started = performance.now();
      conversations.appendMessage(sessionId, message(n));
      into.push((performance.now() - started) * 1000);
    };
    for (let n = 0; n < TIMED_APPENDS; n++) {
      // Swap the order every other round so neither side always follows the other.
      if (n % 2 === 0) {
        timeAppend(short, n, shortUs);
        timeAppend(long, n, longUs);
      } else {
        timeAppend(long, n, longUs);
        timeAppend(short, n, shortUs);
      }
    }

    const shortMedian = median(shortUs);
    const longMedian = median(longUs);
    const shortLine = `append at ${SHORT} messages: median ${fmt(shortMedian)} µs, p99 ${fmt(percentile(shortUs, 0.99))} µs (${TIMED_APPENDS} appends)`;
    const longLine = `append at ${LONG.toLocaleString('en-US')} messages: median ${fmt(longMedian)} µs, p99 ${fmt(percentile(longUs, 0.99))} µs (${TIMED_APPENDS} appends)`;
    const ratioLine = `append cost ratio ${LONG.toLocaleString('en-US')} vs ${SHORT} messages: ${(longMedian / shortMedian).toFixed(2)}× (1.00 = independent of history length)`;
    for (const line of [shortLine, longLine, ratioLine]) console.log(line);
    return {
      name: 'append cost',
      summary: [
        `message append: median ${fmt(shortMedian)} µs at ${SHORT} messages, ${fmt(longMedian)} µs at ${LONG.toLocaleString('en-US')} (ratio ${(longMedian / shortMedian).toFixed(2)}×)`,
      ],
    };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, run);
