import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from './tool.js';
import type { ToolOutput } from './tool.js';
import { displayPath, errorCode, pathTarget, resolveToolPath } from './paths.js';

const inputSchema = z.object({
  path: z.string().min(1).describe('File to write; relative paths resolve against the workspace.'),
  content: z.string().describe('The complete new content of the file.'),
});

export const writeFileTool = defineTool({
  name: 'write_file',
  description:
    'Create or overwrite a file with the given content (parent directories are created). ' +
    'To change part of an existing file, use edit_file instead.',
  input: inputSchema,
  readOnly: false,
  target: (input) => pathTarget(input.path),
  async run(input, ctx): Promise<ToolOutput> {
    const absolute = resolveToolPath(ctx.workspace, input.path);
    const shown = displayPath(ctx.workspace, absolute);
    let existed = false;
    try {
      const info = await stat(absolute);
      if (info.isDirectory()) return { content: `${shown} is a directory; give a file path.`, isError: true };
      existed = true;
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
    await mkdir(path.dirname(absolute), { recursive: true });
    await writeFile(absolute, input.content, { encoding: 'utf8', signal: ctx.signal });
    const bytes = Buffer.byteLength(input.content, 'utf8');
    return `${existed ? 'Overwrote' : 'Created'} ${shown} (${bytes} bytes written).`;
  },
});
