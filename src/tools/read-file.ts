import { createReadStream } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { distance } from 'fastest-levenshtein';
import { z } from 'zod';
import { defineTool } from './tool.js';
import type { ToolOutput } from './tool.js';
import { displayPath, errorCode, pathTarget, resolveToolPath } from './paths.js';

/** Whole-file reads stop here; past it the model must ask for a range. */
export const READ_MAX_WHOLE_FILE_BYTES = 10 * 1024 * 1024;
export const READ_DEFAULT_LINES = 2000;
const READ_MAX_LINES = 10_000;
const MAX_LINE_CHARS = 2000;
const SNIFF_BYTES = 8192;

const inputSchema = z.object({
  path: z.string().min(1).describe('File to read; relative paths resolve against the workspace.'),
  offset: z.number().int().min(1).optional().describe('First line to show (1-based).'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(READ_MAX_LINES)
    .optional()
    .describe(`Number of lines to show (default ${READ_DEFAULT_LINES}).`),
});

export const readFileTool = defineTool({
  name: 'read_file',
  description:
    `Read a text file with numbered lines (like cat -n). Shows up to ${READ_DEFAULT_LINES} lines; use offset and ` +
    'limit to read other parts of long files. Binary files are refused.',
  input: inputSchema,
  readOnly: true,
  target: (input) => pathTarget(input.path),
  async run(input, ctx): Promise<ToolOutput> {
    const absolute = resolveToolPath(ctx.workspace, input.path);
    const shown = displayPath(ctx.workspace, absolute);
    let size: number;
    try {
      const info = await stat(absolute);
      if (info.isDirectory()) {
        return { content: `${shown} is a directory, not a file. Use the glob tool to list its files.`, isError: true };
      }
      if (!info.isFile()) return { content: `${shown} is not a regular file.`, isError: true };
      size = info.size;
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return { content: await notFound(absolute, shown), isError: true };
      throw error;
    }

    const ranged = input.offset !== undefined || input.limit !== undefined;
    if (size > READ_MAX_WHOLE_FILE_BYTES && !ranged) {
      return {
        content:
          `${shown} is ${(size / 1024 / 1024).toFixed(1)} MB, over the ${READ_MAX_WHOLE_FILE_BYTES / 1024 / 1024} MB ` +
          `limit for reading a whole file. Read a range with offset and limit (e.g. offset=1, limit=${READ_DEFAULT_LINES}) ` +
          'or search it with grep.',
        isError: true,
      };
    }
    if (size === 0) return `(${shown} is empty)`;
    if (await looksBinary(absolute)) {
      return {
        content: `${shown} is a binary file (${size} bytes); read_file only shows text. Use bash (e.g. file, xxd | head) to inspect it.`,
        isError: true,
      };
    }

    const first = input.offset ?? 1;
    const limit = input.limit ?? READ_DEFAULT_LINES;
    // Count the remaining lines only when that is cheap, so the footer can say how many there are.
    const countRest = size <= READ_MAX_WHOLE_FILE_BYTES;
    const { lines, totalLines } = await readLineRange(absolute, first, limit, countRest, ctx.signal);
    if (lines.length === 0) {
      return {
        content: `offset ${first} is past the end of ${shown}, which has ${totalLines ?? 'fewer'} lines.`,
        isError: true,
      };
    }
    const last = first + lines.length - 1;
    const numbered = lines.map((line, index) => `${String(first + index).padStart(6)}\t${line}`).join('\n');
    if (totalLines === undefined) {
      return `${numbered}\n\n[showing lines ${first}–${last}; more lines follow: call read_file with offset=${last + 1} to read on]`;
    }
    if (last < totalLines) {
      return `${numbered}\n\n[showing lines ${first}–${last} of ${totalLines}: call read_file with offset=${last + 1} to read on]`;
    }
    return numbered;
  },
});

async function notFound(absolute: string, shown: string): Promise<string> {
  const message = `File not found: ${shown}.`;
  try {
    const wanted = path.basename(absolute);
    const siblings = await readdir(path.dirname(absolute));
    const close = siblings
      .map((name) => ({ name, score: distance(name.toLowerCase(), wanted.toLowerCase()) }))
      .filter((entry) => entry.score <= Math.max(2, Math.floor(wanted.length / 3)))
      .sort((a, b) => a.score - b.score)
      .slice(0, 3)
      .map((entry) => entry.name);
    if (close.length > 0) return `${message} Did you mean: ${close.join(', ')}?`;
    return message;
  } catch {
    return `${message} Its directory ${path.dirname(shown)} does not exist either.`;
  }
}

/** A NUL byte in the first 8 KB is what git and grep take as "binary". */
export async function looksBinary(absolute: string): Promise<boolean> {
  const handle = await open(absolute, 'r');
  try {
    const buffer = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead).includes(0);
  } finally {
    await handle.close();
  }
}

/**
 * Streams the file once, keeping only the wanted lines, each cut at MAX_LINE_CHARS, so memory
 * stays bounded even for a range in a huge file or a file that is one giant line.
 */
async function readLineRange(
  absolute: string,
  first: number,
  limit: number,
  countRest: boolean,
  signal: AbortSignal,
): Promise<{ lines: string[]; totalLines: number | undefined }> {
  const lines: string[] = [];
  const lastWanted = first + limit - 1;
  let lineNumber = 1;
  let current = '';
  let cut = false;
  let sawText = false;
  let stoppedEarly = false;

  const endLine = () => {
    if (lineNumber >= first && lineNumber <= lastWanted) {
      lines.push(cut ? `${current}… [line cut at ${MAX_LINE_CHARS} characters]` : current);
    }
    lineNumber += 1;
    current = '';
    cut = false;
    sawText = false;
  };

  const stream = createReadStream(absolute, { encoding: 'utf8', highWaterMark: 64 * 1024, signal });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let start = 0;
      for (;;) {
        const newline = chunk.indexOf('\n', start);
        const piece = chunk.slice(start, newline === -1 ? chunk.length : newline);
        if (lineNumber >= first && lineNumber <= lastWanted && !cut) {
          current += piece;
          if (current.length > MAX_LINE_CHARS) {
            current = current.slice(0, MAX_LINE_CHARS);
            cut = true;
          }
        }
        if (piece.length > 0) sawText = true;
        if (newline === -1) break;
        if (current.endsWith('\r')) current = current.slice(0, -1);
        endLine();
        start = newline + 1;
      }
      if (lineNumber > lastWanted && !countRest) {
        stoppedEarly = true;
        break;
      }
    }
  } finally {
    stream.destroy();
  }
  if (stoppedEarly) return { lines, totalLines: undefined };
  // A last line without a trailing newline still counts.
  if (sawText) endLine();
  return { lines, totalLines: lineNumber - 1 };
}
