import type { ChannelCapabilities } from '../channel.js';
import { graphemes } from './graphemes.js';

/**
 * Splits Markdown into chunks that each fit one chat message.
 *
 * Contract:
 * - every chunk is at most `maxLength` UTF-16 units (what the chat platforms count);
 * - a split prefers a paragraph break, then a line break, then a space, then a hard cut; a hard
 *   cut lands on a grapheme boundary (never inside a surrogate pair or a ZWJ emoji) when one fits;
 * - only the whitespace at a split point is dropped; inside a code fence the indentation of
 *   the next line is kept, because it is part of the code;
 * - a split inside a ``` or ~~~ fence closes the fence at the end of the chunk and reopens it,
 *   with the same opening line (so the same info string), at the start of the next; those
 *   added lines count within the limit;
 * - text that is empty or only whitespace gives no chunks (there is nothing to send).
 */
export function splitMessage(text: string, maxLength: number): string[] {
  if (!Number.isInteger(maxLength) || maxLength < 2) {
    throw new RangeError(`maxLength must be an integer of at least 2, got ${maxLength}`);
  }
  if (text.trim() === '') return [];
  if (text.length <= maxLength) return [text];
  return new Splitter(text, maxLength).run();
}

/** `splitMessage` with the platform's own limit. */
export function splitForPlatform(text: string, capabilities: Pick<ChannelCapabilities, 'maxMessageLength'>): string[] {
  return splitMessage(text, capabilities.maxMessageLength);
}

export type RenderedChunk = { markdown: string; rendered: string };

/**
 * Splits Markdown so that each chunk still fits once rendered (a platform may count the text after
 * its HTML is parsed, but rejects a request whose HTML is over the limit, and escaping and tags
 * make HTML longer than the Markdown). A chunk that renders too long is split again with a
 * limit scaled down by how much it grew; after a bounded number of rounds a chunk that still
 * does not fit (only possible with absurdly small limits) is returned as it is.
 */
export function splitRendered(markdown: string, maxLength: number, render: (markdown: string) => string): RenderedChunk[] {
  const out: RenderedChunk[] = [];
  const pending = splitMessage(markdown, maxLength).map((chunk) => ({ chunk, round: 0 }));
  while (pending.length > 0) {
    const { chunk, round } = pending.shift() as { chunk: string; round: number };
    const rendered = render(chunk);
    if (rendered.length <= maxLength || round >= maxResplitRounds || chunk.length <= 2) {
      out.push({ markdown: chunk, rendered });
      continue;
    }
    const scaled = Math.floor((chunk.length * maxLength) / rendered.length * 0.9);
    const limit = Math.max(2, Math.min(chunk.length - 1, scaled));
    const pieces = splitMessage(chunk, limit).map((piece) => ({ chunk: piece, round: round + 1 }));
    pending.unshift(...pieces);
  }
  return out;
}

const maxResplitRounds = 6;

type Fence = {
  /** The opening line as written (indentation, marker, info string), used to reopen. */
  openLine: string;
  /** Indentation plus the marker run, used to close. */
  closer: string;
  marker: '`' | '~';
  length: number;
};

type Line = {
  start: number;
  /** Index of the line's `\n`, or the text's length. */
  end: number;
  kind: 'text' | 'open' | 'close';
  fenceBefore: Fence | null;
  fenceAfter: Fence | null;
};

const openFence = /^([ \t]*)(`{3,}|~{3,})(.*)$/;
const closeFence = /^[ \t]*(`{3,}|~{3,})[ \t]*$/;

function scanLines(text: string): Line[] {
  const lines: Line[] = [];
  let fence: Fence | null = null;
  let start = 0;
  while (start <= text.length) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const content = text.slice(start, end).replace(/\r$/, '');
    const before: Fence | null = fence;
    let kind: Line['kind'] = 'text';
    if (fence === null) {
      const match = openFence.exec(content);
      const marker = match?.[2];
      if (match && marker && !(marker[0] === '`' && (match[3] ?? '').includes('`'))) {
        fence = { openLine: content, closer: (match[1] ?? '') + marker, marker: marker[0] as '`' | '~', length: marker.length };
        kind = 'open';
      }
    } else {
      const run = closeFence.exec(content)?.[1];
      if (run && run[0] === fence.marker && run.length >= fence.length) {
        fence = null;
        kind = 'close';
      }
    }
    lines.push({ start, end, kind, fenceBefore: before, fenceAfter: fence });
    if (newline === -1) break;
    start = newline + 1;
  }
  return lines;
}

/** Fence state at a cut position; `undefined` means the cut would fall inside a fence line. */
type State = Fence | null | undefined;

class Splitter {
  private readonly lines: Line[];
  private readonly chunks: string[] = [];

  constructor(
    private readonly text: string,
    private readonly max: number,
  ) {
    this.lines = scanLines(text);
  }

  run(): string[] {
    let pos = 0;
    while (pos < this.text.length) {
      const fence = this.usable(this.stateAt(pos) ?? null);
      const prefix = fence ? `${fence.openLine}\n` : '';
      if (prefix.length + this.text.length - pos <= this.max) {
        this.push(prefix, this.text.slice(pos), '');
        break;
      }
      const cut = this.atWhitespace(pos, prefix.length) ?? this.hardCut(pos, prefix.length);
      const closing = this.usable(cut.state);
      this.push(prefix, this.text.slice(pos, cut.bodyEnd), closing ? `\n${closing.closer}` : '');
      pos = cut.nextStart;
    }
    return this.chunks;
  }

  private push(prefix: string, body: string, suffix: string): void {
    // A body of only whitespace is all split-point whitespace; sending it would be noise.
    if (body.trim() !== '') this.chunks.push(prefix + body + suffix);
  }

  /** A fence whose reopen and close lines would eat over half a chunk is treated as text. */
  private usable(fence: Fence | null | undefined): Fence | null {
    if (!fence) return null;
    return fence.openLine.length + fence.closer.length + 2 <= this.max / 2 ? fence : null;
  }

  private lineAt(position: number): Line {
    let low = 0;
    let high = this.lines.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.lines[mid] as Line).start <= position) low = mid;
      else high = mid - 1;
    }
    return this.lines[low] as Line;
  }

  private stateAt(position: number): State {
    const line = this.lineAt(position);
    if (position === line.start) return line.fenceBefore;
    if (position >= line.end) return line.fenceAfter;
    return line.kind === 'text' ? line.fenceBefore : undefined;
  }

  /**
   * A cut inside a line must not leave ``` or ~~~ at the start of the next chunk: there it
   * would open a code block that the original text did not have.
   */
  private opensFalseFence(nextStart: number): boolean {
    if (nextStart === 0 || this.text[nextStart - 1] === '\n') return false;
    const head = this.text.slice(nextStart, nextStart + 3);
    return head === '```' || head === '~~~';
  }

  private fits(pos: number, prefixLength: number, bodyEnd: number, state: State): boolean {
    const fence = this.usable(state);
    const suffixLength = fence ? fence.closer.length + 1 : 0;
    return prefixLength + (bodyEnd - pos) + suffixLength <= this.max;
  }

  /** The best split at whitespace: the last paragraph break that fits, else line break, else space. */
  private atWhitespace(pos: number, prefixLength: number): Cut | undefined {
    const best: (Cut | undefined)[] = [undefined, undefined, undefined];
    const runs = /\s+/g;
    runs.lastIndex = pos;
    for (let match = runs.exec(this.text); match && match.index <= pos + this.max; match = runs.exec(this.text)) {
      const start = match.index;
      if (start === pos) continue;
      const cut = this.whitespaceCut(start, start + match[0].length, match[0]);
      if (!cut || !this.fits(pos, prefixLength, cut.bodyEnd, cut.state)) continue;
      const newlines = match[0].split('\n').length - 1;
      best[newlines >= 2 ? 0 : newlines === 1 ? 1 : 2] = cut;
    }
    return best[0] ?? best[1] ?? best[2];
  }

  private whitespaceCut(start: number, end: number, run: string): Cut | undefined {
    const state = this.stateAt(start);
    if (state === undefined) return undefined;
    const lastNewline = run.lastIndexOf('\n');
    // Inside code the next line's indentation is content; outside, leading spaces could turn
    // the next chunk's first line into an indented code block.
    const nextStart = state && lastNewline !== -1 ? start + lastNewline + 1 : end;
    if (lastNewline === -1 && this.opensFalseFence(nextStart)) return undefined;
    if (state) {
      // Cutting right after the opening line or right before the closing line would leave
      // an empty code block in one of the chunks.
      if (this.lineAt(start).kind === 'open' && start === this.lineAt(start).end) return undefined;
      const next = this.lineAt(nextStart);
      if (next.start === nextStart && next.kind === 'close') return undefined;
    }
    return { bodyEnd: start, nextStart, state };
  }

  /** A cut inside a word (or a code line), at the last grapheme boundary that fits. */
  private hardCut(pos: number, prefixLength: number): Cut {
    const limit = Math.min(this.text.length, pos + this.max - prefixLength);
    // Only the tail of the window is segmented: a grapheme is rarely longer than a few dozen
    // units, and segmenting thousands of characters per chunk is slow.
    const from = Math.max(pos, limit - graphemeWindow);
    const boundaries = [...graphemes(this.text.slice(from, limit + 1))]
      .map((segment) => from + segment.index)
      // The slice's own start is not known to be a boundary (it may cut a grapheme).
      .filter((boundary) => boundary > from && boundary <= limit);
    for (const candidates of [boundaries.reverse(), codePointBoundaries(this.text, pos, limit)]) {
      for (const bodyEnd of candidates) {
        const state = this.stateAt(bodyEnd);
        if (state === undefined || this.opensFalseFence(bodyEnd)) continue;
        if (this.fits(pos, prefixLength, bodyEnd, state)) return { bodyEnd, nextStart: bodyEnd, state };
      }
    }
    // Only reachable when a fence line alone overflows the chunk: cut it as plain text.
    const [bodyEnd = pos + 1] = codePointBoundaries(this.text, pos, pos + this.max - prefixLength);
    return { bodyEnd, nextStart: bodyEnd, state: null };
  }
}

type Cut = { bodyEnd: number; nextStart: number; state: Fence | null };

const graphemeWindow = 64;

/** Positions in (pos, limit], last first, that do not fall between the halves of a surrogate pair. */
function* codePointBoundaries(text: string, pos: number, limit: number): Generator<number> {
  for (let at = Math.min(limit, text.length); at > pos; at--) {
    const before = text.charCodeAt(at - 1);
    if (before >= 0xd800 && before <= 0xdbff && at < text.length) continue;
    yield at;
  }
}
