/**
 * What reading hob's YAML costs a cold process, for the reader hob uses (js-yaml through
 * src/core/yaml.ts) against the one it used before (the `yaml` package: parseDocument + toJS
 * for the config, parse for front matter). Each is bundled as dist/ bundles it (esbuild, the
 * same options), then, in fresh node processes taken alternately, timed in CPU: importing
 * the bundle, then parsing what `hob start` parses (a three-channel config as
 * bench/three-channels.ts writes it, and the front matter of every bundled skill and agent).
 * config.example.yaml, every key written, is timed apart (a person's config is usually short).
 * `npx tsx bench/yaml-parse.ts` (BENCH_YAML_RUNS, default 30 per reader).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { fmt, median, runIfMain, type BenchResult } from './stats.js';

const RUNS = Number(process.env.BENCH_YAML_RUNS ?? 30);
const root = join(import.meta.dirname, '..');

const READERS = {
  'js-yaml': `export { parseYaml as config, parseYaml as front } from ${JSON.stringify(join(root, 'src/core/yaml.ts'))};`,
  yaml: `import { parse, parseDocument } from 'yaml';
export function config(text) { const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true }); if (doc.errors.length) throw doc.errors[0]; return doc.toJS({ maxAliasCount: 100 }); }
export const front = (text) => parse(text);`,
};
type Reader = keyof typeof READERS;

const THREE_CHANNELS = `data_dir: /tmp/hob-bench/data
model: { provider: anthropic, name: claude-bench, api_key: test, base_url: http://127.0.0.1:40001, retry: { max_attempts: 1 } }
channels:
  console: { enabled: false }
  telegram: { token: "123456:ABC-def", api_root: http://127.0.0.1:40002, allow_from: ["1000", "1001", "1002"] }
  slack: { bot_token: xoxb-1-2-3, app_token: xapp-1-2, api_url: "http://127.0.0.1:40003/api/", allow_from: ["U0", "U1", "U2"] }
  discord: { token: "abc.def.ghi", api_url: http://127.0.0.1:40004/api, allow_from: ["2000", "2001", "2002"] }
`;

/** One cold process: CPU ms to import the bundle, to parse the start's YAML, to parse config.example.yaml. */
const CHILD = `
const [bundle, inputs] = process.argv.slice(1);
const { config, fronts, example } = JSON.parse(require('node:fs').readFileSync(inputs, 'utf8'));
const cpu = () => { const used = process.cpuUsage(); return (used.user + used.system) / 1000; };
let started = 0;
// The ESM loader's own start is not the reader's: an empty module takes it first.
import('data:text/javascript,').then(() => {
  started = cpu();
  return import(bundle);
}).then((reader) => {
  const imported = cpu();
  reader.config(config);
  for (const text of fronts) reader.front(text);
  const parsed = cpu();
  reader.config(example);
  console.log(JSON.stringify({ importMs: imported - started, parseMs: parsed - imported, exampleMs: cpu() - parsed }));
});`;

type Sample = { importMs: number; parseMs: number; exampleMs: number };

function frontMatters(): string[] {
  const matter = (file: string) => /^---\r?\n([\s\S]*?)\r?\n---/.exec(readFileSync(file, 'utf8'))?.[1] ?? '';
  const skills = readdirSync(join(root, 'skills')).map((name) => join(root, 'skills', name, 'SKILL.md'));
  const agents = readdirSync(join(root, 'agents')).filter((name) => name.endsWith('.md')).map((name) => join(root, 'agents', name));
  return [...skills, ...agents].map(matter);
}

async function run(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hob-yaml-bench-'));
  try {
    const bundles = {} as Record<Reader, string>;
    for (const [reader, source] of Object.entries(READERS) as [Reader, string][]) {
      bundles[reader] = join(dir, `${reader}.mjs`);
      await build({
        stdin: { contents: source, resolveDir: root, loader: 'ts' },
        outfile: bundles[reader],
        bundle: true,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        minifyWhitespace: true,
        minifySyntax: true,
        banner: { js: "import { createRequire as __hobRequire } from 'node:module'; const require = __hobRequire(import.meta.url);" },
        logLevel: 'warning',
      });
    }
    const inputs = join(dir, 'inputs.json');
    const fronts = frontMatters();
    writeFileSync(inputs, JSON.stringify({ config: THREE_CHANNELS, fronts, example: readFileSync(join(root, 'config.example.yaml'), 'utf8') }));
    const samples: Record<Reader, Sample[]> = { 'js-yaml': [], yaml: [] };
    for (let round = 0; round < RUNS; round++) {
      for (const reader of (round % 2 ? ['yaml', 'js-yaml'] : ['js-yaml', 'yaml']) as Reader[]) {
        const child = spawnSync(process.execPath, ['-e', CHILD, bundles[reader], inputs], { encoding: 'utf8' });
        if (child.status !== 0) throw new Error(`${reader}: ${child.stderr}`);
        samples[reader].push(JSON.parse(child.stdout) as Sample);
      }
    }
    const figure = (reader: Reader, key: keyof Sample) => median(samples[reader].map((sample) => sample[key]));
    const total = (reader: Reader) => median(samples[reader].map((sample) => sample.importMs + sample.parseMs));
    const size = (reader: Reader) => `${fmt(readFileSync(bundles[reader]).length / 1024)} KB`;
    const line = (reader: Reader) =>
      `  ${reader}: bundle ${size(reader)}; CPU import ${fmt(figure(reader, 'importMs'))} ms + parse ${fmt(figure(reader, 'parseMs'))} ms = ${fmt(total(reader))} ms; config.example.yaml ${fmt(figure(reader, 'exampleMs'))} ms`;
    const summary = [
      `reading hob's YAML in a cold process (${RUNS} processes per reader, alternately, medians; the start's config + ${fronts.length} front matters)`,
      line('js-yaml'),
      line('yaml'),
      `  js-yaml / yaml: import + parse ${fmt(total('js-yaml') / total('yaml'))}× (${fmt(total('yaml') - total('js-yaml'))} ms less)`,
    ];
    for (const text of summary) console.log(text);
    return { name: 'yaml parse (cold)', summary };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, run);
