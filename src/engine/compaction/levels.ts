/**
 * The four compaction levels, cheapest first. Each takes a history and returns a shorter one
 * (or the same when it has nothing to do); none rewrites the stored record, and each keeps
 * the invariants in invariants.ts.
 */
import { isPersonMessage, text, type Block, type Message, type ToolUseBlock } from '../../core/messages.js';

/** Results of these tools can be fetched again, so old ones are safe to clear. */
const COMPACTABLE_TOOLS = new Set(['bash', 'read_file', 'grep', 'glob', 'web_fetch', 'edit_file', 'write_file', 'session_search']);

/** Marks the text a compaction wrote, so a later one recognizes its own summary. */
export const COMPACTED_MARK = '[Earlier conversation compacted';
/** Introduces the person's newest message when a summary carries it. */
export const LATEST_MARK = "[The person's latest message, as sent:]";

const CLEARED = '[Old result of ';
const COLLAPSE_OVER = 1_600;
const HEAD_CHARS = 900;
const TAIL_CHARS = 500;

/** Level 1: clears old results of compactable tools, keeping the newest `keepRecent`; says what was cleared. */
export function clearOldToolResults(messages: readonly Message[], keepRecent = 5): Message[] {
  const calls = new Map<string, ToolUseBlock>();
  for (const message of messages) for (const block of message.content) if (block.type === 'tool_use') calls.set(block.id, block);
  const clearable: Array<{ message: number; block: number }> = [];
  messages.forEach((message, m) =>
    message.content.forEach((block, b) => {
      if (block.type !== 'tool_result' || block.content.startsWith(CLEARED)) return;
      const call = calls.get(block.toolUseId);
      if (call && COMPACTABLE_TOOLS.has(call.name)) clearable.push({ message: m, block: b });
    }),
  );
  const toClear = clearable.slice(0, Math.max(0, clearable.length - keepRecent));
  if (toClear.length === 0) return [...messages];
  const out = messages.map((message) => ({ ...message, content: [...message.content] }));
  for (const { message, block } of toClear) {
    const target = out[message] as Message;
    const result = target.content[block];
    if (result?.type !== 'tool_result') continue;
    const call = calls.get(result.toolUseId) as ToolUseBlock;
    target.content[block] = {
      ...result,
      content: `${CLEARED}${call.name}${describeTarget(call.input)} cleared to save space (${result.content.length} chars). Run it again if you need it.]`,
    };
  }
  return out;
}

/**
 * Keeps a text that compaction cuts short, somewhere the model can read it again; returns
 * where ("kept/3f2a….txt" in the workspace), or undefined when it could not be kept.
 */
export type KeepText = (text: string) => string | undefined;

/**
 * Level 2: long texts and tool results in older messages keep their head and tail (in the
 * recent ones too, when longer than `oversizeChars`: a paste the window cannot carry); the cut
 * says where the whole is: a result of a tool that can run again is fetched again, anything
 * else (a paste, an answer, another tool's result) is kept in the workspace by `keep`, and a
 * person's own text is found by session_search when it could not be kept.
 */
export function collapseLongTexts(messages: readonly Message[], preserveRecent = 6, keep?: KeepText, oversizeChars = Number.POSITIVE_INFINITY): Message[] {
  const calls = new Map<string, string>();
  for (const message of messages) for (const block of message.content) if (block.type === 'tool_use') calls.set(block.id, block.name);
  const newest = messages.findLastIndex(isPersonMessage);
  const end = Math.max(0, messages.length - preserveRecent);
  return messages.map((message, index) => {
    if (index === newest) return message;
    // The recent messages stay whole, unless a block in them is too big for the window to carry.
    const over = index >= end ? oversizeChars : COLLAPSE_OVER;
    let changed = false;
    const content = message.content.map((block): Block => {
      if (block.type === 'text' && block.text.length > over) {
        changed = true;
        const where = keep?.(block.text);
        return { ...block, text: collapse(block.text, where ? `the whole text is kept in the workspace: ${where}` : message.role === 'user' ? 'session_search finds the whole text' : '') };
      }
      if (block.type === 'tool_result' && block.content.length > over) {
        changed = true;
        const tool = calls.get(block.toolUseId) ?? '';
        const where = COMPACTABLE_TOOLS.has(tool) ? undefined : keep?.(block.content);
        return { ...block, content: collapse(block.content, where ? `the whole output is kept in the workspace: ${where}` : COMPACTABLE_TOOLS.has(tool) ? `run ${tool} again for the whole output` : '') };
      }
      return block;
    });
    return changed ? { ...message, content } : message;
  });
}

function collapse(value: string, where: string): string {
  return `${value.slice(0, HEAD_CHARS)}\n…[collapsed ${value.length - HEAD_CHARS - TAIL_CHARS} chars${where ? `; ${where}` : ''}]…\n${value.slice(-TAIL_CHARS)}`;
}

/**
 * Where levels 3 and 4 cut: the summary covers `messages[0, cut)`, the rest is kept as is.
 * The kept part starts with an assistant message or a person's message, so no tool_result is
 * separated from its tool_use. The latest cut that still keeps `keepRecent` messages; when
 * the history is shorter, the latest cut there is.
 */
export function chooseCut(messages: readonly Message[], keepRecent = 6): number | undefined {
  const cuts: number[] = [];
  for (let index = 1; index < messages.length; index += 1) {
    const message = messages[index] as Message;
    if (message.role === 'assistant' || isPersonMessage(message)) cuts.push(index);
  }
  const keeping = cuts.filter((cut) => messages.length - cut >= keepRecent);
  return keeping.at(-1) ?? cuts.at(-1);
}

/**
 * The compacted history: one user message holding the summary (and the person's newest
 * message whole, when it lies in the summarized part), then the kept messages.
 */
export function withSummary(messages: readonly Message[], cut: number, summary: string): Message[] {
  const tail = messages.slice(cut);
  const first = tail[0];
  if (first && isPersonMessage(first)) return [{ role: 'user', content: [text(summary), ...first.content] }, ...tail.slice(1)];
  const newest = messages.slice(0, cut).findLast(isPersonMessage);
  const request: Block[] = newest ? [text(LATEST_MARK), ...newest.content] : [];
  return [{ role: 'user', content: [text(summary), ...request] }, ...tail];
}

/** Renders a header, a summary and the carried state as the text levels 3 and 4 write. */
export function summaryText(level: 3 | 4, count: number, summary: string, carried: string): string {
  const how = level === 3 ? 'an outline' : 'a summary';
  return [
    `${COMPACTED_MARK}: ${how} of ${count} earlier messages. The full record is kept; session_search finds anything said in it.]`,
    `<summary>\n${summary.trim()}\n</summary>`,
    carried,
  ]
    .filter(Boolean)
    .join('\n');
}

const LINE_CHARS = 160;
const OUTLINE_LINES = 48;
const OUTLINE_CHARS = 4_000;
const PREVIOUS_CHARS = 2_000;

/** Level 3's outline: who asked what, which tools ran on what, what was answered. No model call. */
export function outline(messages: readonly Message[], maxChars = OUTLINE_CHARS): string {
  const lines: string[] = [];
  let previous = '';
  for (const message of messages) {
    for (const block of message.content) {
      switch (block.type) {
        case 'text': {
          if (block.text.startsWith(COMPACTED_MARK)) {
            previous = earlierSummary(block.text, Math.min(PREVIOUS_CHARS, Math.floor(maxChars / 2)));
            break;
          }
          const line = squash(block.text);
          if (line && !/^\[[^\]]*\]$/.test(line)) lines.push(`- ${message.role === 'user' ? 'The person' : 'hob'}: ${line}`);
          break;
        }
        case 'tool_use':
          lines.push(`- hob ran ${block.name}${describeTarget(block.input)}`);
          break;
        case 'tool_result':
          if (block.isError) lines.push(`  (that failed: ${squash(block.content)})`);
          break;
        case 'image':
          lines.push('- (an image)');
          break;
        case 'thinking':
        case 'redacted_thinking':
          break;
        default: {
          const unknownBlock: never = block;
          void unknownBlock;
        }
      }
    }
  }
  const kept: string[] = [];
  let chars = 0;
  for (const line of lines.reverse()) {
    if (kept.length >= OUTLINE_LINES || chars + line.length > maxChars) break;
    kept.unshift(line);
    chars += line.length + 1;
  }
  const omitted = lines.length - kept.length;
  return [previous && `Before that:\n${previous}`, omitted > 0 ? `(${omitted} older lines left out)` : '', ...kept].filter(Boolean).join('\n');
}

/** The summary an earlier compaction wrote, so it is not lost by the next one. */
function earlierSummary(value: string, maxChars: number): string {
  const match = /<summary>\n?([\s\S]*?)\n?<\/summary>/.exec(value);
  const inner = (match?.[1] ?? '').trim();
  return inner.length > maxChars ? `${inner.slice(0, maxChars)}…` : inner;
}

/** A transcript of the summarized part, for the level 4 model call, one entry per block. */
export function transcript(messages: readonly Message[], perBlockChars = 2_000): string[] {
  const entries: string[] = [];
  for (const message of messages) {
    for (const block of message.content) {
      const who = message.role === 'user' ? 'PERSON' : 'HOB';
      switch (block.type) {
        case 'text':
          if (block.text.trim()) entries.push(`${who}: ${clip(block.text, perBlockChars)}`);
          break;
        case 'tool_use':
          entries.push(`HOB CALLED ${block.name} ${clip(JSON.stringify(block.input ?? {}), 400)}`);
          break;
        case 'tool_result':
          entries.push(`RESULT${block.isError ? ' (error)' : ''}: ${clip(block.content, perBlockChars / 2)}`);
          break;
        case 'image':
          entries.push(`${who}: (an image)`);
          break;
        case 'thinking':
        case 'redacted_thinking':
          break;
        default: {
          const unknownBlock: never = block;
          void unknownBlock;
        }
      }
    }
  }
  return entries;
}

function describeTarget(input: unknown): string {
  if (typeof input !== 'object' || input === null) return '';
  const fields = input as Record<string, unknown>;
  const target = [fields.path, fields.url, fields.command, fields.pattern, fields.query].find((value) => typeof value === 'string');
  return typeof target === 'string' ? ` ${clip(target.replace(/\s+/g, ' '), 100)}` : '';
}

function squash(value: string): string {
  return clip(value.replace(/\s+/g, ' ').trim(), LINE_CHARS);
}

function clip(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}
