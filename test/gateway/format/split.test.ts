import { beforeAll, describe, expect, it } from 'vitest';
import { splitForPlatform, splitMessage, splitRendered } from '../../../src/gateway/format/split.js';
import { loadMarkdown, markdownToTelegramHtml } from '../../../adapters/telegram/html.js';

// The Markdown walk loads on first need in hob (html.ts); these call the renderers directly.
beforeAll(() => loadMarkdown());

/** mulberry32: a tiny seeded generator, so a failing input can be reproduced from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const emoji = ['😀', '👍🏽', '👨‍👩‍👧', '🇺🇦', '🎉', '❤️'];
const languages = ['python', 'ts', 'bash', '', 'c++'];

function generateDocument(rand: () => number): string {
  const int = (low: number, high: number): number => low + Math.floor(rand() * (high - low + 1));
  const pick = <T>(items: T[]): T => items[int(0, items.length - 1)] as T;
  const word = (): string => (rand() < 0.1 ? pick(emoji) : 'abcdefghij'.slice(0, int(1, 10)));
  const sentence = (): string => Array.from({ length: int(3, 40) }, word).join(' ');
  const blocks: string[] = [];
  for (let i = int(1, 25); i > 0; i--) {
    const kind = rand();
    if (kind < 0.4) {
      blocks.push(Array.from({ length: int(1, 6) }, sentence).join(rand() < 0.5 ? '\n' : ' '));
    } else if (kind < 0.5) {
      // One long line with no spaces at all: forces hard cuts.
      blocks.push(Array.from({ length: int(50, 1500) }, () => (rand() < 0.05 ? pick(emoji) : 'x')).join(''));
    } else if (kind < 0.85) {
      const marker = rand() < 0.8 ? '```' : '~~~';
      const body = Array.from({ length: int(1, 80) }, () => ' '.repeat(int(0, 8)) + sentence());
      blocks.push([`${marker}${pick(languages)}`, ...body, marker].join('\n'));
    } else {
      blocks.push(Array.from({ length: int(2, 12) }, () => `- ${sentence()}`).join('\n'));
    }
  }
  return blocks.join('\n\n');
}

const fenceLine = /^\s*(`{3,}|~{3,})([^`]*)$/;

/** Independent of the splitter: true when every fence opened in the chunk is closed again. */
function fencesBalanced(chunk: string): boolean {
  let open: string | undefined;
  for (const line of chunk.split('\n')) {
    const match = fenceLine.exec(line);
    if (!match) continue;
    const marker = match[1] as string;
    if (open === undefined) open = marker;
    else if (marker[0] === open[0] && marker.length >= open.length && (match[2] ?? '').trim() === '') open = undefined;
  }
  return open === undefined;
}

/** Non-whitespace content with fence lines (which the splitter may add) removed. */
function content(text: string): string {
  return text
    .split('\n')
    .filter((line) => !fenceLine.test(line))
    .join('\n')
    .replace(/\s+/g, '');
}

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('splitMessage on generated documents', () => {
  it('keeps every chunk within the limit, every fence balanced, every emoji whole, and all content in order', () => {
    // What went wrong, by seed: checked with plain comparisons and asserted once at the end
    // (one `expect` per chunk cost more CPU than the splitting itself, ~12,600 chunks).
    const problems: string[] = [];
    for (let seed = 1; seed <= 300; seed++) {
      const rand = random(seed);
      const text = generateDocument(rand);
      const limit = [4096, 2000, 3000, 80 + Math.floor(rand() * 900)][seed % 4] as number;
      const chunks = splitMessage(text, limit);
      const where = `seed ${seed}, limit ${limit}`;
      chunks.forEach((chunk, index) => {
        if (chunk.length > limit) problems.push(`${where}: chunk ${index} is ${chunk.length} characters long`);
        if (!fencesBalanced(chunk)) problems.push(`${where}: chunk ${index} leaves a fence open: ${chunk}`);
        if (loneSurrogate.test(chunk)) problems.push(`${where}: chunk ${index} cuts an emoji in half`);
        if (chunk.trim() === '') problems.push(`${where}: chunk ${index} is empty`);
      });
      if (content(chunks.join('\n')) !== content(text)) problems.push(`${where}: the chunks' content differs from the text's`);
    }
    expect(problems).toEqual([]);
  });
});

describe('splitMessage', () => {
  it('splits at the paragraph break even when a later line break would fit more', () => {
    const first = 'First paragraph, short.';
    const second = Array.from({ length: 20 }, (_, i) => `line ${i} of the second paragraph`).join('\n');
    const chunks = splitMessage(`${first}\n\n${second}`, 200);
    expect(chunks[0]).toBe(first);
    expect(chunks[1]?.startsWith('line 0 of the second paragraph')).toBe(true);
  });

  it('splits at a line break rather than between words when there is no paragraph break', () => {
    const text = Array.from({ length: 30 }, (_, i) => `line number ${i} has a few words`).join('\n');
    const chunks = splitMessage(text, 100);
    for (const chunk of chunks) expect(chunk).toMatch(/words$/);
    expect(chunks.join('\n')).toBe(text);
  });

  it('closes a code block at a split and reopens it with its language in the next chunk', () => {
    const code = Array.from({ length: 40 }, (_, i) => `    print("value", ${i})`).join('\n');
    const chunks = splitMessage(`Here is the script:\n\n\`\`\`python\n${code}\n\`\`\`\n\nDone.`, 300);
    const inCode = chunks.filter((chunk) => chunk.includes('print('));
    expect(inCode.length).toBeGreaterThan(2);
    for (const chunk of inCode) {
      expect(chunk.length).toBeLessThanOrEqual(300);
      expect(chunk.startsWith('```python\n')).toBe(true);
      expect(chunk.replace(/\n\nDone\.$/, '').endsWith('\n```')).toBe(true);
    }
    // Indentation inside the code survives the split.
    for (const chunk of inCode) expect(chunk.split('\n')[1]).toMatch(/^ {4}print/);
  });

  it('reopens a ~~~ fence with ~~~ and its info string', () => {
    const text = `~~~ts\n${Array.from({ length: 30 }, (_, i) => `const v${i} = ${i};`).join('\n')}\n~~~`;
    const chunks = splitMessage(text, 120);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.startsWith('~~~ts\n')).toBe(true);
      expect(chunk.endsWith('\n~~~')).toBe(true);
    }
  });

  it('hard-splits a 10,000-character line into full chunks without losing a character', () => {
    const line = 'a'.repeat(10_000);
    const chunks = splitMessage(line, 4096);
    expect(chunks.map((chunk) => chunk.length)).toEqual([4096, 4096, 1808]);
    expect(chunks.join('')).toBe(line);
  });

  it('sends text of exactly the limit as one chunk', () => {
    const text = `${'word '.repeat(819)}x`;
    expect(text.length).toBe(4096);
    expect(splitMessage(text, 4096)).toEqual([text]);
  });

  it('gives nothing to send for text that is only whitespace', () => {
    expect(splitMessage('  \n\n\t \n', 10)).toEqual([]);
    expect(splitMessage('', 10)).toEqual([]);
  });

  it('never cuts an emoji in half, even in a long run of emoji', () => {
    const text = '😀'.repeat(1500) + '👨‍👩‍👧'.repeat(300);
    const chunks = splitMessage(text, 2000);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(2000);
      expect(loneSurrogate.test(chunk)).toBe(false);
    }
    expect(chunks.join('')).toBe(text);
    // The family emoji is one glyph: no chunk starts with a zero-width joiner.
    for (const chunk of chunks) expect(chunk.startsWith('\u200d')).toBe(false);
  });

  it('rejects a limit too small to hold a character', () => {
    expect(() => splitMessage('hello', 1)).toThrow(RangeError);
  });

  it('uses the platform limit from the capabilities', () => {
    const text = Array.from({ length: 300 }, (_, i) => `Paragraph ${i}.`).join('\n\n');
    const chunks = splitForPlatform(text, { maxMessageLength: 2000 });
    expect(chunks.length).toBe(Math.ceil(text.length / 2000));
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(2000);
  });
});

describe('splitRendered', () => {
  it('keeps each rendered Telegram chunk within the limit when escaping makes the HTML longer', () => {
    const text = Array.from({ length: 200 }, (_, i) => `if a < b && c > d then **${i}** & "quote"`).join('\n');
    const chunks = splitRendered(text, 1000, markdownToTelegramHtml);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.rendered.length).toBeLessThanOrEqual(1000);
      expect(chunk.rendered).toBe(markdownToTelegramHtml(chunk.markdown));
    }
    expect(content(chunks.map((chunk) => chunk.markdown).join('\n'))).toBe(content(text));
  });

  it('returns one chunk when the rendered text already fits', () => {
    expect(splitRendered('**hi**', 4096, markdownToTelegramHtml)).toEqual([{ markdown: '**hi**', rendered: '<b>hi</b>' }]);
  });
});
