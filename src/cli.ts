#!/usr/bin/env node
import { plainStart } from './cli/start-args.js';
import { reportFailure } from './cli/report-failure.js';

/**
 * hob's command line. A plain `hob start` goes straight to its command: commander and the other
 * commands' definitions (cli/program.ts, with the channels' own terminal commands) are not
 * loaded for it, and in dist/ it runs the build made for it alone (`start-main.js`, fewer and
 * larger files: scripts/build.mjs), which reports its own failures. Everything else is parsed
 * by commander.
 */
const start = plainStart(process.argv.slice(2));
const run = start ? startModule().then(({ startCommand }) => startCommand(start.config)) : import('./cli/program.js').then(({ runProgram }) => runProgram(process.argv));
run.catch(reportFailure);

/** `hob start`'s module: from source, cli/start.ts; in dist/, the start build's entry beside this file. */
function startModule(): Promise<typeof import('./cli/start.js')> {
  if (import.meta.url.endsWith('.ts')) return import('./cli/start.js');
  // A computed URL, so esbuild leaves it to node rather than bundling start.ts here again.
  return import(new URL('./start-main.js', import.meta.url).href) as Promise<typeof import('./cli/start.js')>;
}
