import { execFileSync } from 'node:child_process';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { globTool } from '../../src/tools/glob.js';
import { grepTool } from '../../src/tools/grep.js';
import { makeContext, makeWorkspace, removeWorkspace, runTool } from './tool-harness.js';

/** ripgrep is optional: when `which rg` finds nothing, only the JS fallback can be tested here. */
const hasRipgrep = (() => {
  try {
    execFileSync('which', ['rg'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let workspace: string;
beforeEach(async () => {
  workspace = await makeWorkspace();
});
afterEach(async () => {
  await removeWorkspace(workspace);
});

async function put(relative: string, content: string | Buffer, mtimeSeconds?: number): Promise<void> {
  const file = path.join(workspace, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  if (mtimeSeconds !== undefined) await utimes(file, mtimeSeconds, mtimeSeconds);
}

describe('glob', () => {
  it('lists matching files newest first, skipping node_modules and .git', async () => {
    await put('src/old.ts', '', 1_000_000);
    await put('src/new.ts', '', 3_000_000);
    await put('src/mid.ts', '', 2_000_000);
    await put('src/readme.md', '');
    await put('node_modules/pkg/index.ts', '');
    await put('.git/hooks/x.ts', '');
    const result = await runTool(globTool, { pattern: '**/*.ts' }, makeContext(workspace));
    expect(result.content).toBe(['src/new.ts', 'src/mid.ts', 'src/old.ts'].join('\n'));
  });

  it('searches under the given path and still shows workspace-relative paths', async () => {
    await put('a/one.txt', '');
    await put('b/two.txt', '');
    const result = await runTool(globTool, { pattern: '*.txt', path: 'b' }, makeContext(workspace));
    expect(result.content).toBe('b/two.txt');
  });

  it('caps the list and says how many matched', async () => {
    for (let index = 0; index < 205; index += 1) await put(`many/f${index}.txt`, '');
    const result = await runTool(globTool, { pattern: 'many/*.txt' }, makeContext(workspace));
    const lines = result.content.split('\n');
    expect(lines.filter((line) => line.startsWith('many/'))).toHaveLength(200);
    expect(result.content).toMatch(/\[showing 200 of 205 matches, newest first; narrow the pattern or path/);
  });

  it('refuses patterns that reach outside the search directory, which permissions would not see', async () => {
    for (const pattern of ['/etc/*', '../**', 'src/../../x', '~/.ssh/*']) {
      const result = await runTool(globTool, { pattern }, makeContext(workspace));
      expect(result).toEqual({
        content: 'The glob pattern must be relative and stay inside the search directory; put the directory in path instead.',
        isError: true,
      });
    }
    expect(globTool.target?.({ pattern: '*', path: '/etc' })).toEqual({ path: '/etc' });
  });

  it('says when nothing matches, and when the directory is missing', async () => {
    expect((await runTool(globTool, { pattern: '*.rs' }, makeContext(workspace))).content).toBe('No files match *.rs in the workspace.');
    const missing = await runTool(globTool, { pattern: '*', path: 'nowhere' }, makeContext(workspace));
    expect(missing).toEqual({ content: 'Directory not found: nowhere.', isError: true });
  });
});

const engines = [
  { name: 'JS fallback (forced)', tool: grepTool({ ripgrep: false }) },
  ...(hasRipgrep ? [{ name: 'ripgrep', tool: grepTool({ ripgrep: 'rg' }) }] : []),
];

describe.each(engines)('grep with $name', ({ tool }) => {
  beforeEach(async () => {
    await put('src/app.ts', 'const answer = 42;\nexport function Hello() {}\nconst question = "?";\n');
    await put('src/lib/util.ts', 'export const hello = "world";\n');
    await put('docs/notes.md', 'say Hello to the team\n');
    await put('node_modules/dep/index.js', 'hello from a dependency\n');
    await put('.git/config', 'hello = git\n');
    await put('image.bin', Buffer.concat([Buffer.from('hello'), Buffer.from([0, 1, 2])]));
  });

  it('prints file:line: text sorted by path, skipping node_modules, .git and binary files', async () => {
    const result = await runTool(tool, { pattern: 'hello', case_insensitive: true }, makeContext(workspace));
    expect(result.content).toBe(
      ['docs/notes.md:1: say Hello to the team', 'src/app.ts:2: export function Hello() {}', 'src/lib/util.ts:1: export const hello = "world";'].join('\n'),
    );
  });

  it('is case-sensitive unless asked otherwise', async () => {
    const result = await runTool(tool, { pattern: 'Hel+o' }, makeContext(workspace));
    expect(result.content).toBe('docs/notes.md:1: say Hello to the team\nsrc/app.ts:2: export function Hello() {}');
  });

  it('limits the search to files matching a glob and to a path', async () => {
    const byGlob = await runTool(tool, { pattern: 'hello', glob: '*.ts', case_insensitive: true }, makeContext(workspace));
    expect(byGlob.content).toBe('src/app.ts:2: export function Hello() {}\nsrc/lib/util.ts:1: export const hello = "world";');
    const byPath = await runTool(tool, { pattern: 'const', path: 'src/lib' }, makeContext(workspace));
    expect(byPath.content).toBe('src/lib/util.ts:1: export const hello = "world";');
    const oneFile = await runTool(tool, { pattern: 'question', path: 'src/app.ts' }, makeContext(workspace));
    expect(oneFile.content).toBe('src/app.ts:3: const question = "?";');
  });

  it('stops at max_results and says how to see more', async () => {
    const result = await runTool(tool, { pattern: 'const', max_results: 2 }, makeContext(workspace));
    expect(result.content).toBe(
      'src/app.ts:1: const answer = 42;\nsrc/app.ts:3: const question = "?";\n\n' +
        '[stopped at 2 matches; narrow the pattern, path or glob, or raise max_results]',
    );
  });

  it('says when nothing matches', async () => {
    const result = await runTool(tool, { pattern: 'zebra' }, makeContext(workspace));
    expect(result).toEqual({ content: 'No matches for /zebra/ in the workspace.', isError: false });
  });

  it('reports an invalid regular expression as an error', async () => {
    const result = await runTool(tool, { pattern: 'foo(' }, makeContext(workspace));
    expect(result.isError).toBe(true);
  });
});

describe('grep engine choice', () => {
  it('falls back to the JS search when the configured rg binary does not run', async () => {
    await put('a.txt', 'needle\n');
    const tool = grepTool({ ripgrep: path.join(workspace, 'no-such-rg') });
    expect((await runTool(tool, { pattern: 'needle' }, makeContext(workspace))).content).toBe('a.txt:1: needle');
  });

  it.skipIf(!hasRipgrep)('gives the same output with ripgrep and with the JS fallback', async () => {
    await put('x/y.txt', 'alpha\nbeta alpha\n');
    await put('x-z.txt', 'alpha\n');
    const input = { pattern: 'alpha' };
    const viaRipgrep = await runTool(grepTool({ ripgrep: 'rg' }), input, makeContext(workspace));
    const viaJs = await runTool(grepTool({ ripgrep: false }), input, makeContext(workspace));
    expect(viaRipgrep).toEqual(viaJs);
  });
});
