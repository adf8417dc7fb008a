import { spawn } from 'node:child_process';
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { defineTool } from './tool.js';
import type { ToolOutput } from './tool.js';
import { displayPath, errorCode, pathTarget, resolveToolPath, walkSecretCheck } from './paths.js';

export type GrepToolOptions = {
  /**
   * 'auto' (default): use ripgrep when `rg` runs, detected once on first use; false: always the
   * JS fallback (tests, or machines where rg misbehaves); a string: the rg binary to use.
   */
  ripgrep?: 'auto' | false | string;
};

const DEFAULT_MAX_RESULTS = 100;
const MAX_LINE_CHARS = 300;
/** The fallback reads whole files; bigger ones are skipped (and counted) to bound memory. */
const FALLBACK_MAX_FILE_BYTES = 10 * 1024 * 1024;
const SKIPPED_DIRS = new Set(['node_modules', '.git']);
const SECRETS_SKIPPED = 'paths that hold secrets (keys, credentials, hob\'s own config and database) were skipped';

const inputSchema = z.object({
  pattern: z.string().min(1).describe('Regular expression to search for.'),
  path: z.string().optional().describe('File or directory to search; default: the workspace.'),
  glob: z.string().optional().describe('Only search files matching this glob, e.g. "*.ts" or "src/**/*.md".'),
  case_insensitive: z.boolean().optional(),
  max_results: z.number().int().min(1).max(2000).optional().describe(`Default ${DEFAULT_MAX_RESULTS}.`),
});

type Search = {
  regex: string;
  base: string;
  glob: string | undefined;
  caseInsensitive: boolean;
  maxResults: number;
  workspace: string;
  signal: AbortSignal;
  isSensitive(path: string): boolean;
};
type Found = { lines: string[]; capped: boolean; note?: string } | { error: string };

/**
 * `grep`: regex search over files, printing `file:line: text` with paths relative to the
 * workspace. ripgrep when installed (it also honours .gitignore); otherwise a JS walk that
 * skips node_modules, .git, symlinks and binary files. Both sort by path, so they agree.
 */
export function grepTool(options: GrepToolOptions = {}) {
  const ripgrep = options.ripgrep ?? 'auto';
  return defineTool({
    name: 'grep',
    description:
      'Search file contents with a regular expression. Prints "file:line: text" per matching line. ' +
      'node_modules and .git are skipped; use glob to limit the files searched.',
    input: inputSchema,
    readOnly: true,
    target: (input) => pathTarget(input.path),
    async run(input, ctx): Promise<ToolOutput> {
      const base = resolveToolPath(ctx.workspace, input.path);
      try {
        await stat(base);
      } catch (error) {
        if (errorCode(error) === 'ENOENT') {
          return { content: `Path not found: ${displayPath(ctx.workspace, base)}.`, isError: true };
        }
        throw error;
      }
      const search: Search = {
        regex: input.pattern,
        base,
        glob: input.glob,
        caseInsensitive: input.case_insensitive ?? false,
        maxResults: input.max_results ?? DEFAULT_MAX_RESULTS,
        workspace: ctx.workspace,
        signal: ctx.signal,
        isSensitive: walkSecretCheck(ctx.isSensitivePath),
      };
      const binary = ripgrep === false ? undefined : ripgrep === 'auto' ? 'rg' : ripgrep;
      const found = binary !== undefined && (await ripgrepWorks(binary)) ? await searchWithRipgrep(binary, search) : await searchWithJs(search);
      if ('error' in found) return { content: found.error, isError: true };
      const shownBase = displayPath(ctx.workspace, base);
      const where = shownBase === '.' ? 'the workspace' : shownBase;
      if (found.lines.length === 0) return `No matches for /${input.pattern}/ in ${where}.${found.note ? ` ${found.note}` : ''}`;
      let text = found.lines.join('\n');
      if (found.capped) {
        text += `\n\n[stopped at ${search.maxResults} matches; narrow the pattern, path or glob, or raise max_results]`;
      }
      if (found.note) text += `\n[${found.note}]`;
      return text;
    },
  });
}

const ripgrepChecks = new Map<string, Promise<boolean>>();

/** Runs `rg --version` once per binary per process; later calls reuse the answer. */
export function ripgrepWorks(binary: string): Promise<boolean> {
  let check = ripgrepChecks.get(binary);
  if (!check) {
    check = new Promise<boolean>((resolve) => {
      const child = spawn(binary, ['--version'], { stdio: 'ignore' });
      child.on('error', () => resolve(false));
      child.on('exit', (code) => resolve(code === 0));
    });
    ripgrepChecks.set(binary, check);
  }
  return check;
}

function formatLine(workspace: string, file: string, line: number, text: string): string {
  const clean = text.endsWith('\r') ? text.slice(0, -1) : text;
  const cut = clean.length > MAX_LINE_CHARS ? `${clean.slice(0, MAX_LINE_CHARS)}…` : clean;
  return `${displayPath(workspace, file)}:${line}: ${cut}`;
}

async function searchWithRipgrep(binary: string, search: Search): Promise<Found> {
  // node's readline loads with the first search, not at start-up.
  const { createInterface } = await import('node:readline');
  const args = ['--no-heading', '--with-filename', '--line-number', '--color', 'never', '--null'];
  args.push('--hidden', '--no-follow', '--sort', 'path', '--max-columns', '1000', '--max-columns-preview');
  if (search.caseInsensitive) args.push('--ignore-case');
  if (search.glob !== undefined) args.push('--glob', search.glob);
  // Later globs win in rg, so these exclusions hold even when the user's glob would match.
  for (const dir of SKIPPED_DIRS) args.push('--glob', `!${dir}`);
  args.push('--regexp', search.regex, '--', search.base);

  return new Promise((resolve) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], signal: search.signal });
    const lines: string[] = [];
    const hidden = new Set<string>();
    let capped = false;
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 4000) stderr += chunk;
    });
    const reader = createInterface({ input: child.stdout, crlfDelay: Infinity });
    reader.on('line', (raw) => {
      if (capped) return;
      // --null: "path\0line:text", so paths containing ':' parse safely.
      const nul = raw.indexOf('\0');
      const colon = raw.indexOf(':', nul + 1);
      if (nul === -1 || colon === -1) return;
      const file = raw.slice(0, nul);
      if (search.isSensitive(file)) {
        hidden.add(file);
        return;
      }
      lines.push(formatLine(search.workspace, file, Number(raw.slice(nul + 1, colon)), raw.slice(colon + 1)));
      if (lines.length >= search.maxResults) {
        capped = true;
        child.kill();
      }
    });
    child.on('error', (error) => {
      if (error.name === 'AbortError') resolve({ error: 'grep was cancelled.' });
      else resolve({ error: `ripgrep failed to run: ${error.message}` });
    });
    child.on('close', (code) => {
      // Exit 2 with matches means some files could not be read; the matches still stand.
      if (code === 2 && lines.length === 0 && !capped) {
        resolve({ error: `grep failed: ${stderr.trim() || 'ripgrep exited with status 2'}` });
        return;
      }
      resolve(hidden.size ? { lines, capped, note: SECRETS_SKIPPED } : { lines, capped });
    });
  });
}

async function searchWithJs(search: Search): Promise<Found> {
  let regex: RegExp;
  try {
    regex = new RegExp(search.regex, search.caseInsensitive ? 'i' : '');
  } catch (error) {
    return { error: `Invalid regular expression /${search.regex}/: ${(error as Error).message}` };
  }
  const globMatches = search.glob === undefined ? undefined : picomatch(search.glob, { dot: true, basename: !search.glob.includes('/') });
  const lines: string[] = [];
  let skippedLarge = 0;
  let skippedSecret = false;

  const searchFile = async (file: string): Promise<boolean> => {
    if (globMatches && !globMatches(toPosix(path.relative(search.base, file) || path.basename(file)))) return true;
    const info = await stat(file).catch(() => undefined);
    if (!info) return true;
    if (info.size > FALLBACK_MAX_FILE_BYTES) {
      skippedLarge += 1;
      return true;
    }
    const buffer = await readFile(file).catch(() => undefined);
    if (!buffer || buffer.subarray(0, 8192).includes(0)) return true;
    const fileLines = buffer.toString('utf8').split('\n');
    for (let index = 0; index < fileLines.length; index += 1) {
      const text = fileLines[index] ?? '';
      if (index === fileLines.length - 1 && text === '') break;
      if (!regex.test(text)) continue;
      lines.push(formatLine(search.workspace, file, index + 1, text));
      if (lines.length >= search.maxResults) return false;
    }
    return true;
  };

  // Depth-first with entries sorted by name: the same order as `rg --sort path`.
  const walk = async (dir: string): Promise<boolean> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return true; // unreadable directory: skip it, as rg does
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (search.signal.aborted) return false;
      const full = path.join(dir, entry.name);
      if (search.isSensitive(full)) {
        skippedSecret = true;
        continue;
      }
      if (entry.isDirectory()) {
        if (SKIPPED_DIRS.has(entry.name)) continue;
        if (!(await walk(full))) return false;
      } else if (entry.isFile()) {
        if (!(await searchFile(full))) return false;
      }
    }
    return true;
  };

  const complete = (await stat(search.base)).isDirectory() ? await walk(search.base) : await searchFile(search.base);
  if (search.signal.aborted) return { error: 'grep was cancelled.' };
  const notes = [
    ...(skippedLarge > 0 ? [`${skippedLarge} files over 10 MB were not searched; use bash with rg or grep for them`] : []),
    ...(skippedSecret ? [SECRETS_SKIPPED] : []),
  ];
  const note = notes.length ? notes.join('; ') : undefined;
  return note === undefined ? { lines, capped: !complete } : { lines, capped: !complete, note };
}

function toPosix(relative: string): string {
  return relative.split(path.sep).join('/');
}
