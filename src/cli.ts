#!/usr/bin/env node
import { UserFacingError, errorMessage } from './core/errors.js';
import { plainStart } from './cli/start-args.js';

/**
 * hob's command line. A plain `hob start` goes straight to its command: commander and the other
 * commands' definitions (cli/program.ts, with the channels' own terminal commands) are not
 * loaded for it, ~15 ms of each start. Everything else is parsed by commander.
 */
const start = plainStart(process.argv.slice(2));
const run = start
  ? import('./cli/start.js').then(({ startCommand }) => startCommand(start.config))
  : import('./cli/program.js').then(({ runProgram }) => runProgram(process.argv));

run.catch((error: unknown) => {
  if (error instanceof UserFacingError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`hob failed: ${errorMessage(error)}\n`);
    if (process.env.HOB_DEBUG) process.stderr.write(`${error instanceof Error ? error.stack : ''}\n`);
  }
  process.exitCode = 1;
});
