import { Marked } from 'marked';
import type { MarkedToken, Token, Tokens, TokenizerExtension } from 'marked';
import { graphemes } from './graphemes.js';

/**
 * One walk over marked's token tree, parameterised by an output dialect, so an HTML
 * renderer and the plain-text fallback agree on structure (lists, tables, quotes, links) and
 * differ only in how they mark it up.
 */
export interface Dialect {
  /** Literal text, escaped as the dialect needs. */
  text(literal: string): string;
  bold(inner: string): string;
  italic(inner: string): string;
  strike(inner: string): string;
  spoiler(inner: string): string;
  code(literal: string): string;
  pre(literal: string, language: string | undefined): string;
  /** Only called with an href that `linkable` accepted; `inner` is already rendered. */
  link(inner: string, href: string): string;
  /** `nested` is true for a quote inside a quote (some chats cannot nest blockquotes). */
  quote(inner: string, nested: boolean): string;
  heading(inner: string): string;
  /** An aligned plain-text table (cells already stripped of markup). */
  table(layout: string): string;
}

/** Spoilers as chat users write them: ||hidden||. */
const spoiler: TokenizerExtension = {
  name: 'spoiler',
  level: 'inline',
  start: (src) => {
    const at = src.indexOf('||');
    return at === -1 ? undefined : at;
  },
  tokenizer(src) {
    const match = /^\|\|(?=\S)([\s\S]*?\S)\|\|/.exec(src);
    if (!match) return undefined;
    return { type: 'spoiler', raw: match[0], tokens: this.lexer.inlineTokens(match[1] ?? '') };
  },
};

const markdown = new Marked({ gfm: true, extensions: [spoiler] });

function lex(source: string): Token[] {
  return markdown.lexer(source);
}

const linkSchemes = /^(?:https?:|tg:|mailto:)/i;

/** Only http(s), chat-app (`tg:`) and mail links become links; `javascript:` and the like stay text. */
export function linkable(href: string): boolean {
  if (!linkSchemes.test(href)) return false;
  return URL.canParse(href);
}

const namedEntities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/**
 * Markdown resolves character references in text (`&amp;` shows as `&`); marked leaves most of
 * them to its HTML output, so the walk decodes the common ones itself. Unknown names stay literal.
 */
export function decodeEntities(text: string): string {
  return text.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z]+);/g, (whole, body: string) => {
    if (body[0] !== '#') return Object.hasOwn(namedEntities, body) ? (namedEntities[body] as string) : whole;
    const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
    if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
    return String.fromCodePoint(code);
  });
}

export class MarkdownWalk {
  private quoteDepth = 0;

  constructor(private readonly d: Dialect) {}

  render(source: string): string {
    this.quoteDepth = 0;
    return this.blocks(lex(source)).trim();
  }

  private blocks(tokens: Token[], separator = '\n\n'): string {
    return tokens
      .map((token) => this.block(token))
      .filter((rendered) => rendered.trim() !== '')
      .join(separator);
  }

  private block(token: Token): string {
    // Extension tokens arrive as Tokens.Generic; everything else is one of marked's own.
    const t = token as MarkedToken;
    switch (t.type) {
      case 'space':
      case 'def':
      case 'checkbox':
        return '';
      case 'paragraph':
        return this.inline(t.tokens);
      case 'text':
        return t.tokens ? this.inline(t.tokens) : this.d.text(decodeEntities(t.text));
      case 'heading':
        return this.d.heading(this.inline(t.tokens));
      case 'code':
        return this.d.pre(t.text, languageOf(t.lang));
      case 'blockquote': {
        this.quoteDepth++;
        const inner = this.blocks(t.tokens);
        this.quoteDepth--;
        return this.d.quote(inner, this.quoteDepth > 0);
      }
      case 'list':
        return this.list(t, 0);
      case 'table':
        return this.d.table(this.table(t));
      case 'hr':
        return '———';
      case 'html':
        // Raw HTML is shown as written, never passed through.
        return this.d.text(t.text.replace(/\n+$/, ''));
      default:
        return this.inlineToken(token);
    }
  }

  private list(list: Tokens.List, depth: number): string {
    const start = typeof list.start === 'number' ? list.start : 1;
    const indent = '  '.repeat(depth);
    const bullet = depth === 0 ? '•' : '◦';
    return list.items
      .map((item, index) => {
        const box = item.task ? (item.checked ? '☑' : '☐') : '';
        const marker = list.ordered ? `${start + index}.${box ? ` ${box}` : ''}` : box || bullet;
        const parts = item.tokens.map((token) =>
          token.type === 'list' ? this.list(token as Tokens.List, depth + 1) : this.block(token),
        );
        const [first = '', ...rest] = parts.filter((part) => part.trim() !== '');
        const head = `${indent}${marker} ${first}`;
        return [head, ...rest].join('\n');
      })
      .join('\n');
  }

  /** Columns padded to the widest cell, `|` between them, a rule under the header. */
  private table(table: Tokens.Table): string {
    const plain = new MarkdownWalk(plainCells);
    const cell = (c: Tokens.TableCell): string => plain.inline(c.tokens).replace(/\s*\n\s*/g, ' ');
    const rows = [table.header.map(cell), ...table.rows.map((row) => row.map(cell))];
    const columns = Math.max(...rows.map((row) => row.length));
    const widths = Array.from({ length: columns }, (_, i) => Math.max(1, ...rows.map((row) => width(row[i] ?? ''))));
    const pad = (text: string, i: number): string => {
      const room = (widths[i] ?? 0) - width(text);
      const align = table.align[i];
      if (align === 'right') return ' '.repeat(room) + text;
      if (align === 'center') return ' '.repeat(Math.floor(room / 2)) + text + ' '.repeat(Math.ceil(room / 2));
      return text + ' '.repeat(room);
    };
    const line = (row: string[]): string =>
      Array.from({ length: columns }, (_, i) => pad(row[i] ?? '', i)).join(' | ').trimEnd();
    const rule = widths.map((w) => '-'.repeat(w)).join('-+-');
    const [header = [], ...body] = rows;
    return [line(header), rule, ...body.map(line)].join('\n');
  }

  inline(tokens: Token[] | undefined): string {
    return (tokens ?? []).map((token) => this.inlineToken(token)).join('');
  }

  private inlineToken(token: Token): string {
    if (token.type === 'spoiler') return this.d.spoiler(this.inline(token.tokens));
    const t = token as MarkedToken;
    switch (t.type) {
      case 'text':
        // `raw` is the source text: marked's `text` is half-way to HTML (some entities resolved, `&` escaped).
        return t.tokens ? this.inline(t.tokens) : this.d.text(decodeEntities(t.raw));
      case 'escape':
        return this.d.text(t.text);
      case 'strong':
        return this.d.bold(this.inline(t.tokens));
      case 'em':
        return this.d.italic(this.inline(t.tokens));
      case 'del':
        return this.d.strike(this.inline(t.tokens));
      case 'codespan':
        return this.d.code(t.text);
      case 'br':
        return '\n';
      case 'link': {
        const href = t.autolink ? t.href : decodeEntities(t.href);
        const inner = this.inline(t.tokens) || this.d.text(href);
        return linkable(href) ? this.d.link(inner, href) : inner;
      }
      case 'image': {
        const href = decodeEntities(t.href);
        const inner = this.d.text(t.text || href);
        return linkable(href) ? this.d.link(inner, href) : inner;
      }
      case 'html':
        return this.d.text(t.text);
      case 'checkbox':
      case 'space':
      case 'def':
        return '';
      default:
        // Block tokens never appear inline; an unknown extension token shows its source.
        return this.d.text(token.raw);
    }
  }
}

function languageOf(lang: string | undefined): string | undefined {
  const word = lang?.trim().split(/\s+/)[0];
  return word && /^[\w#+.-]+$/.test(word) ? word : undefined;
}

const wide = /\p{Extended_Pictographic}|\p{Regional_Indicator}|[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff01-\uff60]/u;

/** Columns a cell takes in a monospace font: emoji and CJK take two, a ZWJ sequence one glyph. */
function width(text: string): number {
  let columns = 0;
  for (const { segment } of graphemes(text)) columns += wide.test(segment) ? 2 : 1;
  return columns;
}

const identity = (inner: string): string => inner;

/** A link in plain text: "text (url)", or just the url when the text already is the url. */
export function plainLink(inner: string, href: string): string {
  const same = [inner, `mailto:${inner}`, `http://${inner}`, `https://${inner}`].includes(href);
  return same ? inner : `${inner} (${href})`;
}

/** Table cells: markup dropped, text as written (the dialect's `table` escapes the whole layout). */
const plainCells: Dialect = {
  text: identity,
  bold: identity,
  italic: identity,
  strike: identity,
  spoiler: identity,
  code: identity,
  pre: identity,
  link: plainLink,
  quote: identity,
  heading: identity,
  table: identity,
};
