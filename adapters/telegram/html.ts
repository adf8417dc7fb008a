import { OnFirstNeed } from '../../src/core/on-first-need.js';
import type { Dialect } from '../../src/gateway/format/markdown-walk.js';
import { isPlainText } from '../../src/gateway/format/plain-text.js';

/**
 * Markdown as models write it → Telegram's HTML parse mode.
 *
 * Output uses only <b> <i> <s> <u> <code> <pre> <a href> <blockquote> <tg-spoiler>, is always
 * balanced (it is rendered from marked's token tree, so half a fence or a stray `**` while
 * streaming still gives valid markup), and shows any HTML in the input literally.
 * Headings become bold lines; lists become lines starting with "• " (nested "◦ ", indented)
 * or "1. "; task items "☐ " / "☑ "; tables become a <pre> block with aligned columns, since
 * Telegram has no tables and a monospace block is the only way to keep columns lined up;
 * images become links to the image; a horizontal rule becomes "———".
 * Only http(s), tg and mailto links become <a>; others show their text only.
 */
export function markdownToTelegramHtml(markdown: string): string {
  return isPlainText(markdown) ? escapeHtml(markdown) : walks.loaded().html.render(markdown);
}

/**
 * A readable plain-text version, for when Telegram rejects the markup: code kept as written,
 * emphasis markers and backticks dropped, links as "text (url)", quotes prefixed with "> ".
 */
export function stripMarkdown(markdown: string): string {
  return isPlainText(markdown) ? markdown : walks.loaded().plain.render(markdown);
}

/**
 * The Markdown walk (marked, whose top level builds its rules: ~5 ms of a cold start), on first
 * need. Plain text never needs it (most short answers): the adapter loads it once hob is idle
 * after its start, and its sends and edits wait for it first when their text needs it.
 */
const walks = new OnFirstNeed('Telegram\'s Markdown walk', async () => {
  const { MarkdownWalk, plainLink } = await import('../../src/gateway/format/markdown-walk.js');
  return { html: new MarkdownWalk(telegramHtml), plain: new MarkdownWalk({ ...plainText, link: plainLink }) };
});

export async function loadMarkdown(): Promise<void> {
  await walks.load();
}

/** Loads the walk first when `markdown` (not sent as plain text) needs it. */
export async function markdownFor(markdown: string, plain?: boolean): Promise<void> {
  if (!plain && !walks.isLoaded && !isPlainText(markdown)) await walks.load();
}

/** Escapes text for Telegram HTML, in element content and in attribute values alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => htmlEscapes[c] ?? c);
}

const htmlEscapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

const wrap =
  (tag: string) =>
  (inner: string): string =>
    inner === '' ? '' : `<${tag}>${inner}</${tag}>`;

const telegramHtml: Dialect = {
  text: escapeHtml,
  bold: wrap('b'),
  italic: wrap('i'),
  strike: wrap('s'),
  spoiler: wrap('tg-spoiler'),
  code: (literal) => (literal === '' ? '' : `<code>${escapeHtml(literal)}</code>`),
  pre: (literal, language) =>
    language
      ? `<pre><code class="language-${escapeHtml(language)}">${escapeHtml(literal)}</code></pre>`
      : `<pre>${escapeHtml(literal)}</pre>`,
  link: (inner, href) => `<a href="${escapeHtml(href)}">${inner}</a>`,
  // Telegram cannot nest blockquotes; an inner quote joins the outer one.
  quote: (inner, nested) => (nested ? inner : wrap('blockquote')(inner)),
  heading: wrap('b'),
  table: (layout) => `<pre>${escapeHtml(layout)}</pre>`,
};

const keep = (inner: string): string => inner;

/** Its links are the walk's own plain form (plainLink), put in once the walk is loaded. */
const plainText: Omit<Dialect, 'link'> = {
  text: keep,
  bold: keep,
  italic: keep,
  strike: keep,
  spoiler: keep,
  code: keep,
  pre: keep,
  quote: (inner) =>
    inner
      .split('\n')
      .map((line) => (line === '' ? '>' : `> ${line}`))
      .join('\n'),
  heading: keep,
  table: keep,
};
