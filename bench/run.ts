/**
 * `npm run bench`: runs each benchmark in its own node process, one after another (a fresh
 * heap each, and --expose-gc for the memory figures), relays what they print, then prints a
 * summary table and a block of lines to paste into the README. Benchmarks assert nothing;
 * a benchmark that crashes is reported and the rest still run.
 */
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { RESULT_MARKER, type BenchResult } from './stats.js';

const BENCHMARKS = ['loop-overhead', 'append-cost', 'answer-writes', 'cold-start', 'start-to-poll', 'gateway', 'sandbox', 'memory', 'slack', 'live-answer', 'discord', 'web', 'delivery', 'scheduler', 'mcp', 'continuity', 'voice', 'small-window', 'postgres', 'cluster', 'agents', 'vs-floor'];

type Outcome = { file: string; seconds: number; result?: BenchResult; error?: string };

function runOne(file: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(import.meta.dirname, `${file}.ts`)], {
      cwd: join(import.meta.dirname, '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let result: BenchResult | undefined;
    let stderr = '';
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith(RESULT_MARKER)) result = JSON.parse(line.slice(RESULT_MARKER.length)) as BenchResult;
      else console.log(`  ${line}`);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      process.stderr.write(chunk);
    });
    child.on('close', (code) => {
      const seconds = (performance.now() - started) / 1000;
      if (code === 0 && result) resolve({ file, seconds, result });
      else resolve({ file, seconds, error: `exited ${code}${stderr ? `: ${stderr.trim().split('\n')[0]}` : ''}` });
    });
  });
}

function machine(): string {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `node ${process.version}, ${cpus().length} × ${cpu}, ${process.platform}/${process.arch}`;
}

// A whole run of the test suite (bench/test-suite.ts): as long as `npm test` itself.
if (process.env.HOB_BENCH_SKIP_TESTS !== '1') BENCHMARKS.push('test-suite');

const outcomes: Outcome[] = [];
for (const file of BENCHMARKS) {
  console.log(`\n▶ ${file}`);
  outcomes.push(await runOne(file));
}

const width = Math.max(...outcomes.map((outcome) => outcome.file.length));
console.log('\nSummary');
console.log(`${'benchmark'.padEnd(width)}  time     result`);
for (const outcome of outcomes) {
  const status = outcome.result ? `${outcome.result.summary.length} figure(s)` : `FAILED (${outcome.error})`;
  console.log(`${outcome.file.padEnd(width)}  ${outcome.seconds.toFixed(1).padStart(5)} s  ${status}`);
}

console.log('\nFor the README (npm run bench):');
console.log('```');
console.log(`# ${machine()}, ${new Date().toISOString().slice(0, 10)}`);
for (const outcome of outcomes) {
  if (outcome.result) for (const line of outcome.result.summary) console.log(line);
  else console.log(`${outcome.file}: not measured (${outcome.error})`);
}
console.log('```');

if (outcomes.some((outcome) => !outcome.result)) process.exitCode = 1;
