import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { z } from 'zod';
import { defineTool } from './tool.js';
import { displayPath, errorCode, pathTarget, resolveToolPath } from './paths.js';

const MAX_BYTES = 50 * 1024 * 1024;

/** A plain relative path stays in the workspace: sending it needs no approval. */
function inWorkspace(path: string): boolean {
  return !isAbsolute(path) && !path.startsWith('~') && !path.split(/[\\/]/).includes('..');
}

/**
 * Sends a file into the chat the person is talking from. A workspace file goes without
 * asking; any other file is sent only after an approval (it leaves the machine).
 */
export const sendFileTool = defineTool({
  name: 'send_file',
  description: 'Send a file to the person in the chat (e.g. a report or an image you made). The path is relative to the workspace.',
  input: z.object({
    path: z.string().min(1).describe('File to send'),
    caption: z.string().max(1000).optional().describe('A short caption'),
  }),
  readOnly: ({ path }) => inWorkspace(path),
  target: ({ path }) => pathTarget(path),
  run: async ({ path, caption }, ctx) => {
    if (!ctx.sendFile) return { content: 'This chat cannot receive files; describe the result in text instead.', isError: true };
    const absolute = resolveToolPath(ctx.workspace, path);
    try {
      const info = await stat(absolute);
      if (!info.isFile()) return { content: `${path} is not a file.`, isError: true };
      if (info.size > MAX_BYTES) return { content: `${path} is ${Math.round(info.size / 1048576)} MB; the limit is 50 MB.`, isError: true };
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return { content: `${path} does not exist.`, isError: true };
      throw error;
    }
    if (inWorkspace(path)) {
      // No approval was asked: a link inside the workspace must not lead out of it.
      const [real, root] = await Promise.all([realpath(absolute), realpath(ctx.workspace)]);
      const rel = relative(root, real);
      if (rel.startsWith('..') || isAbsolute(rel)) {
        return { content: `${path} links to a file outside the workspace; give its full path instead (sending it then needs the person's approval).`, isError: true };
      }
    }
    await ctx.sendFile(absolute, caption);
    return `Sent ${displayPath(ctx.workspace, absolute)} to the chat.`;
  },
});
