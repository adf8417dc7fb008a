import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from './tool.js';
import { displayPath, errorCode, pathTarget, resolveToolPath } from './paths.js';

const MAX_BYTES = 50 * 1024 * 1024;

/** Sends a workspace file into the chat the person is talking from. */
export const sendFileTool = defineTool({
  name: 'send_file',
  description: 'Send a file to the person in the chat (e.g. a report or an image you made). The path is relative to the workspace.',
  input: z.object({
    path: z.string().min(1).describe('File to send'),
    caption: z.string().max(1000).optional().describe('A short caption'),
  }),
  readOnly: true,
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
    await ctx.sendFile(absolute, caption);
    return `Sent ${displayPath(ctx.workspace, absolute)} to the chat.`;
  },
});
