/**
 * How long `hob ask hello` takes from a cold process: spawn → first byte of the answer on
 * stdout, and spawn → exit. The model is the loopback fake Anthropic server (the real SDK,
 * real HTTP and SSE), answering at once, so the figures are hob's own start-up and
 * request path. For scale: bare `node -e 0`, and the unbundled source through tsx. Also as
 * a person's shell runs `hob`: bin/hob.mjs with its first line's node flags, loading dist/
 * through its code cache (bin/code-cache.mjs; an untimed run first writes the caches).
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeAnthropic, type FakeAnthropic } from '../test/fakes/anthropic.js';
import { tempDir } from '../test/support/engine.js';
import { cleanEnv, writeConfig } from '../test/support/hob-process.js';
import { fmt, median, runIfMain, type BenchResult } from './stats.js';
import { binLaunch } from './subjects.js';

const BUNDLE_RUNS = 15;
const TSX_RUNS = 2;
const BASELINE_RUNS = 5;
const ANSWER = 'Hello! How can I help?';

const root = join(import.meta.dirname, '..');

type Timing = { firstByteMs: number; exitMs: number };

/** Spawns one process and times its first stdout byte and its exit. Fails on a non-zero exit. */
function timeProcess(args: string[], env: NodeJS.ProcessEnv, expect?: string): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByteMs = Number.NaN;
    let stdout = '';
    let stderr = '';
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => {
      if (Number.isNaN(firstByteMs)) firstByteMs = performance.now() - started;
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const exitMs = performance.now() - started;
      if (code !== 0 || (expect !== undefined && !stdout.includes(expect))) {
        reject(new Error(`${args.join(' ')} exited ${code}\nstdout: ${stdout}\nstderr: ${stderr}`));
        return;
      }
      resolve({ firstByteMs: Number.isNaN(firstByteMs) ? exitMs : firstByteMs, exitMs });
    });
  });
}

async function timeAsk(fake: FakeAnthropic, runs: number, entry: string[], config: string): Promise<Timing[]> {
  const timings: Timing[] = [];
  for (let i = 0; i < runs; i++) {
    fake.push({ text: ANSWER, chunks: 3 });
    timings.push(await timeProcess([...entry, '--config', config, 'ask', 'hello'], cleanEnv(), ANSWER));
  }
  return timings;
}

const medians = (timings: Timing[]) => ({
  firstByte: median(timings.map((t) => t.firstByteMs)),
  exit: median(timings.map((t) => t.exitMs)),
});

export async function run(): Promise<BenchResult> {
  const dir = tempDir('hob-bench-cold-');
  const fake = await startFakeAnthropic({ apiKey: 'test' });
  try {
    const config = writeConfig(
      dir,
      `data_dir: ${dir}/data
model:
  provider: anthropic
  name: claude-bench
  api_key: test
  base_url: ${fake.baseUrl}
`,
    );
    const baseline: Timing[] = [];
    for (let i = 0; i < BASELINE_RUNS; i++) baseline.push(await timeProcess(['-e', '0'], cleanEnv()));
    const node = medians(baseline);
    const nodeLine = `node itself (node -e 0): exit ${fmt(node.exit)} ms median (${BASELINE_RUNS} runs)`;
    console.log(nodeLine);

    // One untimed run creates the data dir and SQLite file, as any real install would have.
    await timeAsk(fake, 1, ['dist/cli.js'], config);
    const bundle = medians(await timeAsk(fake, BUNDLE_RUNS, ['dist/cli.js'], config));
    const bundleLine = `hob ask cold start (dist/cli.js): first byte ${fmt(bundle.firstByte)} ms, exit ${fmt(bundle.exit)} ms median (${BUNDLE_RUNS} runs)`;
    console.log(bundleLine);

    const bin = binLaunch();
    await timeAsk(fake, 1, bin, config);
    const cached = medians(await timeAsk(fake, BUNDLE_RUNS, bin, config));
    const cachedLine = `hob ask cold start through the bin (code cache): first byte ${fmt(cached.firstByte)} ms, exit ${fmt(cached.exit)} ms median (${BUNDLE_RUNS} runs)`;
    console.log(cachedLine);

    const source = medians(await timeAsk(fake, TSX_RUNS, ['--import', 'tsx', 'src/cli.ts'], config));
    const sourceLine = `hob ask from source (tsx src/cli.ts): first byte ${fmt(source.firstByte)} ms, exit ${fmt(source.exit)} ms median (${TSX_RUNS} runs, for comparison)`;
    console.log(sourceLine);

    return {
      name: 'cold start',
      summary: [
        `hob ask cold start: first byte ${fmt(bundle.firstByte)} ms, exit ${fmt(bundle.exit)} ms (median of ${BUNDLE_RUNS}; node -e 0 alone: ${fmt(node.exit)} ms; from source via tsx: ${fmt(source.firstByte)} ms)`,
        cachedLine,
      ],
    };
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, run);
