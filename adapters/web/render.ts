/**
 * hob's Markdown → the HTML the page shows, through the same token walk as Telegram's renderer
 * (marked's token tree, so half a fence while streaming still gives balanced markup). Every
 * piece of text is escaped; raw HTML in the Markdown shows literally; only http(s), mailto
 * (and tg) links become links. The page puts this HTML into bubbles that keep line breaks
 * (`white-space: pre-wrap`), and its Content-Security-Policy allows no inline script either.
 */
import { MarkdownWalk, type Dialect } from '../../src/gateway/format/markdown-walk.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and double- or single-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const wrap =
  (open: string, close: string) =>
  (inner: string): string =>
    inner === '' ? '' : `${open}${inner}${close}`;

const webHtml: Dialect = {
  text: escapeHtml,
  bold: wrap('<strong>', '</strong>'),
  italic: wrap('<em>', '</em>'),
  strike: wrap('<s>', '</s>'),
  spoiler: wrap('<span class="spoiler">', '</span>'),
  code: (literal) => (literal === '' ? '' : `<code>${escapeHtml(literal)}</code>`),
  pre: (literal, language) => `<pre><code${language ? ` data-lang="${escapeHtml(language)}"` : ''}>${escapeHtml(literal)}</code></pre>`,
  link: (inner, href) => `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer nofollow">${inner}</a>`,
  quote: wrap('<blockquote>', '</blockquote>'),
  heading: wrap('<strong class="heading">', '</strong>'),
  table: (layout) => `<pre>${escapeHtml(layout)}</pre>`,
};

const walk = new MarkdownWalk(webHtml);

/** A message's HTML: Markdown rendered, or plain text escaped as it is. */
export function renderHtml(text: string, plain: boolean): string {
  return plain ? escapeHtml(text) : walk.render(text);
}
