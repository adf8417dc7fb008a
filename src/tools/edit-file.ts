import { readFile, stat, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from './tool.js';
import type { ToolOutput } from './tool.js';
import { displayPath, errorCode, pathTarget, resolveToolPath } from './paths.js';
import { looksBinary, READ_MAX_WHOLE_FILE_BYTES } from './read-file.js';

const inputSchema = z.object({
  path: z.string().min(1).describe('File to edit; relative paths resolve against the workspace.'),
  old_string: z.string().min(1, 'old_string is empty; to create a file use write_file').describe('Exact text to replace, including its indentation.'),
  new_string: z.string().describe('Text to put in its place.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence instead of requiring exactly one.'),
});

export const editFileTool = defineTool({
  name: 'edit_file',
  description:
    'Replace an exact string in a file. old_string must match the file exactly (whitespace included) and be ' +
    'unique unless replace_all is set; read the file first and copy the text with enough surrounding context.',
  input: inputSchema,
  readOnly: false,
  target: (input) => pathTarget(input.path),
  async run(input, ctx): Promise<ToolOutput> {
    const absolute = resolveToolPath(ctx.workspace, input.path);
    const shown = displayPath(ctx.workspace, absolute);
    if (input.old_string === input.new_string) {
      return { content: 'old_string and new_string are identical, so there is nothing to change.', isError: true };
    }
    try {
      const info = await stat(absolute);
      if (!info.isFile()) return { content: `${shown} is not a regular file.`, isError: true };
      if (info.size > READ_MAX_WHOLE_FILE_BYTES) {
        return { content: `${shown} is larger than 10 MB; edit it with bash (e.g. sed) instead.`, isError: true };
      }
    } catch (error) {
      if (errorCode(error) === 'ENOENT') {
        return { content: `File not found: ${shown}. To create a new file, use write_file.`, isError: true };
      }
      throw error;
    }
    if (await looksBinary(absolute)) {
      return { content: `${shown} is a binary file; edit_file only changes text files.`, isError: true };
    }

    const original = await readFile(absolute, { encoding: 'utf8', signal: ctx.signal });
    const matches = original.split(input.old_string).length - 1;
    if (matches === 0) return { content: noMatchMessage(original, input.old_string, shown), isError: true };
    if (matches > 1 && !input.replace_all) {
      return {
        content:
          `Found ${matches} matches of old_string in ${shown}; add more surrounding context to make ` +
          'old_string unique, or set replace_all to change every one.',
        isError: true,
      };
    }

    // split/join and slice rather than String.replace, whose `$&`-style patterns would rewrite new_string.
    const firstIndex = original.indexOf(input.old_string);
    const updated = input.replace_all
      ? original.split(input.old_string).join(input.new_string)
      : original.slice(0, firstIndex) + input.new_string + original.slice(firstIndex + input.old_string.length);
    await writeFile(absolute, updated, { encoding: 'utf8', signal: ctx.signal });
    const line = lineAt(original, firstIndex);
    return matches === 1
      ? `Edited ${shown}: replaced 1 occurrence at line ${line}.`
      : `Edited ${shown}: replaced ${matches} occurrences (first at line ${line}).`;
  },
});

function noMatchMessage(content: string, oldString: string, shown: string): string {
  const base = `old_string was not found in ${shown}.`;
  const loose = findIgnoringWhitespace(content, oldString);
  if (loose === undefined) {
    return `${base} Read the file again and copy the exact text you want to replace.`;
  }
  const firstLine = lineAt(content, loose.start);
  const lastLine = lineAt(content, loose.end);
  const excerpt = content
    .split('\n')
    .slice(firstLine - 1, Math.min(lastLine, firstLine + 19))
    .map((text, index) => `${String(firstLine + index).padStart(6)}\t${text}`)
    .join('\n');
  return (
    `${base} A match exists when whitespace is ignored, so the indentation or whitespace differs ` +
    `(lines ${firstLine}–${lastLine}). The file has:\n${excerpt}\n` +
    'Copy that text exactly (tabs, spaces and line breaks) into old_string.'
  );
}

/**
 * Finds old_string with every whitespace run collapsed to one space, and maps the hit back to
 * offsets in the original text so the hint can quote the real lines.
 */
function findIgnoringWhitespace(content: string, oldString: string): { start: number; end: number } | undefined {
  const needle = oldString.replace(/\s+/g, ' ').trim();
  if (needle.length === 0) return undefined;
  const at = content.replace(/\s+/g, ' ').indexOf(needle);
  if (at === -1) return undefined;
  return { start: originalIndex(content, at), end: originalIndex(content, at + needle.length - 1) };
}

/** The index in `text` of the character at `collapsedIndex` in its whitespace-collapsed form. */
function originalIndex(text: string, collapsedIndex: number): number {
  let collapsed = -1;
  let inSpace = false;
  for (let index = 0; index < text.length; index += 1) {
    const space = /\s/.test(text[index] ?? '');
    if (!space || !inSpace) collapsed += 1;
    inSpace = space;
    if (collapsed === collapsedIndex) return index;
  }
  return text.length - 1;
}

function lineAt(content: string, index: number): number {
  let line = 1;
  for (let position = content.indexOf('\n'); position !== -1 && position < index; position = content.indexOf('\n', position + 1)) {
    line += 1;
  }
  return line;
}
