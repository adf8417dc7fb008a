/**
 * What the bash sandbox adds to one call: the median time of `echo hi` through hob's own
 * bash tool with bubblewrap and without, alternating so drift hits both alike. The masks
 * are the real ones for this machine's home directory: what the walk for secrets on disk
 * finds there, in the workspace and its parents. The walk itself is timed too: the first
 * bash call waits for it, later ones use its findings while it is taken again in the
 * background.
 */
import { homedir } from 'node:os';
import { denyingInteraction } from '../src/policy/types.js';
import { createSandbox } from '../src/policy/sandbox.js';
import { createSensitivePaths } from '../src/policy/sensitive-paths.js';
import { bashTool } from '../src/tools/bash.js';
import { tempDir } from '../test/support/engine.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const RUNS = 30;
const WARMUP = 3;
const WALKS = 5;

export async function run(): Promise<BenchResult> {
  const workspace = tempDir('hob-bench-sandbox-');
  const sensitive = createSensitivePaths({ workspace, home: homedir() });
  const sandbox = createSandbox({ settings: { mode: 'auto', network: true }, workspace, home: homedir(), sensitive });
  if (sandbox.status().state !== 'active') {
    const line = `bash sandbox: not measured (${sandbox.describe()})`;
    console.log(line);
    return { name: 'sandbox', summary: [line] };
  }
  const plain = bashTool({ env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  const boxed = bashTool({ env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, sandbox });
  const ctx = { signal: new AbortController().signal, workspace, sessionKey: 'bench', userId: 'bench', interaction: denyingInteraction, progress: () => undefined };
  const input = plain.input.parse({ command: 'echo hi' });
  const time = async (tool: typeof plain): Promise<number> => {
    const started = performance.now();
    const output = await tool.run(input, ctx);
    const elapsed = performance.now() - started;
    if (!(typeof output === 'string' ? output : output.content).startsWith('hi\n')) throw new Error(`unexpected output: ${JSON.stringify(output)}`);
    return elapsed;
  };
  for (let i = 0; i < WARMUP; i++) {
    await time(plain);
    await time(boxed);
  }
  const without: number[] = [];
  const within: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    without.push(await time(plain));
    within.push(await time(boxed));
  }
  const added = median(within) - median(without);
  // Each walk on a fresh matcher, as at start; in slices, as the sandbox takes it.
  const walks: number[] = [];
  let found = await sensitive.onDisk.current();
  for (let i = 0; i < WALKS; i++) {
    const started = performance.now();
    found = await createSensitivePaths({ workspace, home: homedir() }).onDisk.current();
    walks.push(performance.now() - started);
  }
  const lines = [
    `bash \`echo hi\` without the sandbox: ${fmt(median(without))} ms median, p90 ${fmt(percentile(without, 0.9))} ms (${RUNS} runs)`,
    `bash \`echo hi\` inside bubblewrap: ${fmt(median(within))} ms median, p90 ${fmt(percentile(within, 0.9))} ms (${RUNS} runs)`,
    `sandbox cost per bash call: +${fmt(added)} ms median (${found.paths.length} secrets masked)`,
    `walk for secrets on disk (home, workspace and its parents; ${found.seen.toLocaleString('en-US')} entries${found.truncated ? ', cut at a bound' : ''}): ${fmt(median(walks))} ms median, max ${fmt(Math.max(...walks))} ms (${WALKS} walks; the first bash call waits for one)`,
  ];
  for (const line of lines) console.log(line);
  return { name: 'sandbox', summary: lines };
}

runIfMain(import.meta.url, run);
