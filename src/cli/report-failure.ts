import { UserFacingError, errorMessage } from '../core/errors.js';

/**
 * How a command that failed says so: a UserFacingError's own sentence, anything else as "hob
 * failed" (with its stack under HOB_DEBUG); the exit code becomes 1. Used by cli.ts and by
 * `hob start`'s own build (scripts/build.mjs), whose error classes are its own.
 */
export function reportFailure(error: unknown): void {
  if (error instanceof UserFacingError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`hob failed: ${errorMessage(error)}\n`);
    if (process.env.HOB_DEBUG) process.stderr.write(`${error instanceof Error ? error.stack : ''}\n`);
  }
  process.exitCode = 1;
}
