import { mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editFileTool } from '../../src/tools/edit-file.js';
import { readFileTool } from '../../src/tools/read-file.js';
import { writeFileTool } from '../../src/tools/write-file.js';
import { makeContext, makeWorkspace, removeWorkspace, runTool } from './tool-harness.js';

let workspace: string;
beforeEach(async () => {
  workspace = await makeWorkspace();
});
afterEach(async () => {
  await removeWorkspace(workspace);
});

const numbered = (count: number) => Array.from({ length: count }, (_, index) => `line ${index + 1}`).join('\n') + '\n';

describe('read_file', () => {
  it('shows the whole file with line numbers like cat -n', async () => {
    await writeFile(path.join(workspace, 'a.txt'), 'alpha\nbeta\r\ngamma');
    const result = await runTool(readFileTool, { path: 'a.txt' }, makeContext(workspace));
    expect(result).toEqual({ content: '     1\talpha\n     2\tbeta\n     3\tgamma', isError: false });
  });

  it('shows a range and says how to read on', async () => {
    await writeFile(path.join(workspace, 'n.txt'), numbered(10));
    const result = await runTool(readFileTool, { path: 'n.txt', offset: 3, limit: 2 }, makeContext(workspace));
    expect(result.content).toBe(
      '     3\tline 3\n     4\tline 4\n\n[showing lines 3–4 of 10: call read_file with offset=5 to read on]',
    );
  });

  it('shows at most 2000 lines by default', async () => {
    await writeFile(path.join(workspace, 'long.txt'), numbered(2500));
    const result = await runTool(readFileTool, { path: 'long.txt' }, makeContext(workspace));
    expect(result.content).toContain('  2000\tline 2000\n');
    expect(result.content).not.toContain('line 2001');
    expect(result.content).toMatch(/of 2500: call read_file with offset=2001/);
  });

  it('cuts very long lines', async () => {
    await writeFile(path.join(workspace, 'wide.txt'), `${'x'.repeat(5000)}\nnext\n`);
    const result = await runTool(readFileTool, { path: 'wide.txt' }, makeContext(workspace));
    expect(result.content).toContain(`${'x'.repeat(2000)}… [line cut at 2000 characters]\n     2\tnext`);
  });

  it('says clearly when the file does not exist, and suggests a close name', async () => {
    await writeFile(path.join(workspace, 'README.md'), 'hi');
    const result = await runTool(readFileTool, { path: 'README.mdx' }, makeContext(workspace));
    expect(result).toEqual({ content: 'File not found: README.mdx. Did you mean: README.md?', isError: true });
  });

  it('refuses binary files', async () => {
    await writeFile(path.join(workspace, 'blob.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    const result = await runTool(readFileTool, { path: 'blob.bin' }, makeContext(workspace));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/blob\.bin is a binary file/);
  });

  it('refuses to read a file over 10 MB whole, but reads a range of it', async () => {
    const big = path.join(workspace, 'big.log');
    const handle = await open(big, 'w');
    const chunk = numbered(100_000); // ~1.1 MB
    for (let index = 0; index < 10; index += 1) await handle.write(chunk);
    await handle.close();
    const whole = await runTool(readFileTool, { path: 'big.log' }, makeContext(workspace));
    expect(whole.isError).toBe(true);
    expect(whole.content).toMatch(/over the 10 MB limit.*offset and limit/);
    const range = await runTool(readFileTool, { path: 'big.log', offset: 100_001, limit: 2 }, makeContext(workspace));
    expect(range.content).toBe(
      '100001\tline 1\n100002\tline 2\n\n[showing lines 100001–100002; more lines follow: call read_file with offset=100003 to read on]',
    );
  });

  it('says when the offset is past the end', async () => {
    await writeFile(path.join(workspace, 'short.txt'), 'one\ntwo\n');
    const result = await runTool(readFileTool, { path: 'short.txt', offset: 5 }, makeContext(workspace));
    expect(result).toEqual({ content: 'offset 5 is past the end of short.txt, which has 2 lines.', isError: true });
  });

  it('points to glob when given a directory', async () => {
    await mkdir(path.join(workspace, 'src'));
    const result = await runTool(readFileTool, { path: 'src' }, makeContext(workspace));
    expect(result.content).toMatch(/src is a directory.*glob/);
  });

  it('reads absolute paths and exposes the path for permission checks', async () => {
    const file = path.join(workspace, 'abs.txt');
    await writeFile(file, 'x\n');
    expect((await runTool(readFileTool, { path: file }, makeContext(workspace))).content).toBe('     1\tx');
    expect(readFileTool.target?.({ path: '~/.ssh/id_rsa' })).toEqual({ path: path.join(homedir(), '.ssh/id_rsa') });
    expect(readFileTool.readOnly({ path: 'a' })).toBe(true);
  });
});

describe('write_file', () => {
  it('creates parent directories and reports the bytes written', async () => {
    const result = await runTool(writeFileTool, { path: 'deep/er/note.txt', content: 'héllo' }, makeContext(workspace));
    expect(result.content).toBe(`Created ${path.join('deep', 'er', 'note.txt')} (6 bytes written).`);
    expect(await readFile(path.join(workspace, 'deep/er/note.txt'), 'utf8')).toBe('héllo');
  });

  it('says when it overwrote an existing file', async () => {
    await writeFile(path.join(workspace, 'x.txt'), 'old');
    const result = await runTool(writeFileTool, { path: 'x.txt', content: 'new' }, makeContext(workspace));
    expect(result.content).toBe('Overwrote x.txt (3 bytes written).');
    expect(writeFileTool.target?.({ path: 'x.txt', content: '' })).toEqual({ path: 'x.txt' });
  });
});

describe('edit_file', () => {
  const source = 'function greet() {\n  return "hi";\n}\n\nfunction part() {\n  return "hi";\n}\n';
  beforeEach(async () => {
    await writeFile(path.join(workspace, 'code.js'), source);
  });
  const edit = (input: Record<string, unknown>) => runTool(editFileTool, { path: 'code.js', ...input }, makeContext(workspace));

  it('replaces a unique match and changes the file', async () => {
    const result = await edit({ old_string: 'function part() {\n  return "hi";', new_string: 'function part() {\n  return "bye";' });
    expect(result).toEqual({ content: 'Edited code.js: replaced 1 occurrence at line 5.', isError: false });
    expect(await readFile(path.join(workspace, 'code.js'), 'utf8')).toBe(
      'function greet() {\n  return "hi";\n}\n\nfunction part() {\n  return "bye";\n}\n',
    );
  });

  it('says when old_string is not in the file', async () => {
    const result = await edit({ old_string: 'return "hello";', new_string: 'x' });
    expect(result.isError).toBe(true);
    expect(result.content).toBe('old_string was not found in code.js. Read the file again and copy the exact text you want to replace.');
  });

  it('hints that whitespace differs when only indentation is wrong', async () => {
    const result = await edit({ old_string: 'function greet() {\n    return "hi";\n}', new_string: 'x' });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/indentation or whitespace differs \(lines 1–3\)/);
    expect(result.content).toContain('     2\t  return "hi";');
    expect(await readFile(path.join(workspace, 'code.js'), 'utf8')).toBe(source);
  });

  it('refuses an ambiguous match and tells how to fix it', async () => {
    const result = await edit({ old_string: 'return "hi";', new_string: 'return "yo";' });
    expect(result).toEqual({
      content: 'Found 2 matches of old_string in code.js; add more surrounding context to make old_string unique, or set replace_all to change every one.',
      isError: true,
    });
  });

  it('replaces every match with replace_all', async () => {
    const result = await edit({ old_string: 'return "hi";', new_string: 'return "$&";', replace_all: true });
    expect(result.content).toBe('Edited code.js: replaced 2 occurrences (first at line 2).');
    expect(await readFile(path.join(workspace, 'code.js'), 'utf8')).toBe(source.split('return "hi";').join('return "$&";'));
  });

  it('treats identical old and new strings as an error', async () => {
    const result = await edit({ old_string: 'greet', new_string: 'greet' });
    expect(result).toEqual({ content: 'old_string and new_string are identical, so there is nothing to change.', isError: true });
  });

  it('says how to create a file that does not exist', async () => {
    const result = await runTool(editFileTool, { path: 'nope.js', old_string: 'a', new_string: 'b' }, makeContext(workspace));
    expect(result).toEqual({ content: 'File not found: nope.js. To create a new file, use write_file.', isError: true });
  });
});
