import { stat } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import { defineTool } from './tool.js';
import type { ToolOutput } from './tool.js';
import { displayPath, errorCode, pathTarget, resolveToolPath, walkSecretCheck } from './paths.js';

export const GLOB_MAX_RESULTS = 200;
/** Past this many matches, sorting by mtime would cost a stat per file; sort by path instead. */
const MAX_STATS = 10_000;
const STAT_BATCH = 64;

/** Directories nobody means to search; the model can still name them in `path`. */
export const DEFAULT_IGNORES = ['**/node_modules/**', '**/.git/**'];

const inputSchema = z.object({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "**/*.ts" or "src/**/test-*.js".'),
  path: z.string().optional().describe('Directory to search in; default: the workspace.'),
});

export const globTool = defineTool({
  name: 'glob',
  description:
    'Find files by glob pattern (e.g. "**/*.md"), newest first. node_modules and .git are skipped. ' +
    `Returns up to ${GLOB_MAX_RESULTS} paths relative to the workspace.`,
  input: inputSchema,
  readOnly: true,
  target: (input) => pathTarget(input.path),
  async run(input, ctx): Promise<ToolOutput> {
    // The permission layer sees only `path`, so the pattern must not reach outside it.
    if (path.isAbsolute(input.pattern) || input.pattern.split('/').includes('..') || input.pattern.startsWith('~')) {
      return {
        content: 'The glob pattern must be relative and stay inside the search directory; put the directory in path instead.',
        isError: true,
      };
    }
    const base = resolveToolPath(ctx.workspace, input.path);
    const shownBase = displayPath(ctx.workspace, base);
    try {
      if (!(await stat(base)).isDirectory()) {
        return { content: `${shownBase} is not a directory; give glob a directory as path.`, isError: true };
      }
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return { content: `Directory not found: ${shownBase}.`, isError: true };
      throw error;
    }

    const found = await glob(input.pattern, {
      cwd: base,
      absolute: true,
      dot: true,
      onlyFiles: true,
      expandDirectories: false,
      // Symlinked directories can loop or lead outside the tree; list the link, do not walk it.
      followSymbolicLinks: false,
      ignore: DEFAULT_IGNORES,
      signal: ctx.signal,
    });
    // Secrets (keys, credentials, hob's own config) are not listed, even by name.
    const isSecret = walkSecretCheck(ctx.isSensitivePath);
    const files = found.filter((file) => !isSecret(file));
    const hiddenNote = files.length < found.length ? '\n[paths that hold secrets were left out]' : '';
    if (files.length === 0) return `No files match ${input.pattern} in ${shownBase === '.' ? 'the workspace' : shownBase}.${hiddenNote}`;

    const sorted = files.length <= MAX_STATS ? await newestFirst(files) : [...files].sort();
    const order = files.length <= MAX_STATS ? 'newest first' : 'sorted by path (too many to sort by time)';
    const shown = sorted.slice(0, GLOB_MAX_RESULTS).map((file) => displayPath(ctx.workspace, file));
    const list = shown.join('\n');
    if (files.length > GLOB_MAX_RESULTS) {
      return `${list}\n\n[showing ${GLOB_MAX_RESULTS} of ${files.length} matches, ${order}; narrow the pattern or path to see the rest]${hiddenNote}`;
    }
    return `${list}${hiddenNote}`;
  },
});

async function newestFirst(files: string[]): Promise<string[]> {
  const withTimes: { file: string; mtime: number }[] = [];
  for (let index = 0; index < files.length; index += STAT_BATCH) {
    const batch = files.slice(index, index + STAT_BATCH);
    const times = await Promise.all(
      batch.map(async (file) => {
        try {
          return (await stat(file)).mtimeMs;
        } catch {
          return 0; // deleted since the walk: sort it last
        }
      }),
    );
    batch.forEach((file, position) => withTimes.push({ file, mtime: times[position] ?? 0 }));
  }
  // Ties (same mtime) fall back to path order so output is stable.
  withTimes.sort((a, b) => b.mtime - a.mtime || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return withTimes.map((entry) => entry.file);
}
