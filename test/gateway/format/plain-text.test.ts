import slackifyMarkdown from 'slackify-markdown';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadMrkdwn, toMrkdwn } from '../../../adapters/slack/render.js';
import { isPlainText } from '../../../src/gateway/format/plain-text.js';
import { loadMarkdown, markdownToTelegramHtml } from '../../../adapters/telegram/html.js';

// The Markdown walk loads on first need in hob (html.ts); these call the renderers directly.
beforeAll(() => Promise.all([loadMarkdown(), loadMrkdwn()]));

/**
 * Plain text skips the Markdown parsers; what the person reads must be exactly what the
 * parsers made of it. Checked against them on sentences and on random text of the same
 * alphabet (a seeded generator, so a failure repeats). 1,000 random texts hold every pair of
 * neighbouring pieces a plain text can have (385, with the start and end), as 2,000 did; each
 * distinct text is checked once: slackify-markdown's ~0.7 ms a text is most of this file's CPU.
 */

const slackified = (text: string) => slackifyMarkdown(text).replace(/\u200b/g, '').trim();
/** The parser's HTML for `text`: a rule after it forces the full render, and its own lines are cut off again. */
const parsedHtml = (text: string) => {
  const html = markdownToTelegramHtml(`${text}\n\n---`);
  expect(html.endsWith('\n\n———')).toBe(true);
  return html.slice(0, -'\n\n———'.length);
};

function* randomTexts(count: number): Generator<string> {
  let seed = 20;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const pieces = ['word', 'Über', 'naïve', '2026', '42', ' ', ' ', '.', ',', ';', '?', '!', "'", '’', '"', '%', '\n', '\n\n', 'Ann', 'é'];
  for (let i = 0; i < count; i++) {
    let text = '';
    const length = 1 + Math.floor(next() * 12);
    for (let j = 0; j < length; j++) text += pieces[Math.floor(next() * pieces.length)];
    yield text;
  }
}

describe('plain text', () => {
  const sentences = ['Done.', 'Hello Ann, how can I help?', "It's 5 o'clock; time for tea!", 'Line one\nline two', 'Para one\n\nPara two', '"Quoted," she said.', 'Über 100% sure', 'Numbers 1, 2 and 3.'];

  it('is rendered for Slack and Telegram exactly as the Markdown parsers render it', () => {
    const checked = [...new Set([...sentences, ...randomTexts(1000)])].filter(isPlainText);
    expect(checked.length).toBeGreaterThan(450);
    for (const text of checked) {
      expect(toMrkdwn(text), JSON.stringify(text)).toBe(slackified(text));
      expect(markdownToTelegramHtml(text), JSON.stringify(text)).toBe(parsedHtml(text));
    }
  });

  it('is never text with Markdown in it, an address, a list or whitespace Markdown folds', () => {
    for (const text of ['**bold**', '_it_', '`code`', '[a](https://x.y)', '# Title', '1. first', 'one\n2) two', '- item', '> quote', 'see www.example.com', 'a@b.c', 'https://x.y', '  indented', 'trailing ', 'a  b', 'a\n\n\nb', 'tab\there', 'a < b', 'x & y', '|a|b|', '👍 ok']) {
      expect(isPlainText(text), text).toBe(false);
    }
    expect(sentences.every(isPlainText)).toBe(true);
  });

  it('is decided alike for ASCII text, which is read without the Unicode expressions, and for any other text', () => {
    // The rule as the expressions state it (what the renderers were checked against above).
    const line = /^[\p{L}\p{N}\p{M} .,;?!'\u2019"%]+$/u;
    const folded = /^ |\s$|^\s*\n| \n|\n | {2}|\n{3}|^\d+[.)]|\n\d+[.)]|www\./iu;
    const byRule = (text: string) => text.split('\n').every((part) => part === '' || line.test(part)) && !folded.test(text);
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const pieces = ['a', 'Z', 'w', 'W', 'www', '1', '12', ' ', '\n', '.', ')', '*', '\t', ',', '%', '"', "'", '#', '-', '_', '@', '~', '\r', 'é', '’'];
    const texts = ['', ' ', '\n', 'www.', 'WwW.x', 'a www.b', '1.', '12. x', 'x\n3. y', 'x 1. y', 'a\n\nb', 'a\n\n\nb', ' \nx', 'x \n', 'x\n y'];
    for (let i = 0; i < 20_000; i++) {
      let text = '';
      const length = Math.floor(next() * 9);
      for (let j = 0; j < length; j++) text += pieces[Math.floor(next() * pieces.length)];
      texts.push(text);
    }
    const plainOnes = texts.filter((text) => byRule(text));
    expect(plainOnes.length).toBeGreaterThan(500);
    for (const text of texts) expect(isPlainText(text), JSON.stringify(text)).toBe(byRule(text));
  });
});
