import type { MessageEntity } from './types.js';

/**
 * Telegram's HTML parse mode, following TDLib's `parse_html` step by step so that the fake
 * refuses exactly what Telegram refuses, with the same wording and UTF-8 byte offsets
 * ("Unsupported start tag \"\" at byte offset 2" for a bare `a < b`). Bare `&` and `>` and
 * unknown entities such as `&nbsp;` stay literal, as on Telegram.
 */
export type HtmlParseResult = { ok: true; text: string; entities: MessageEntity[] } | { ok: false; error: string };

const supportedTags = new Set([
  'a', 'b', 'strong', 'i', 'em', 's', 'strike', 'del', 'u', 'ins',
  'tg-spoiler', 'tg-emoji', 'span', 'pre', 'code', 'blockquote',
]);

interface OpenTag {
  tag: string;
  argument: string;
  /** UTF-16 offset in the parsed text, which is simply its JS length. */
  offset: number;
}

class HtmlSyntaxError extends Error {}

export function parseTelegramHtml(source: string): HtmlParseResult {
  try {
    return { ok: true, ...parse(source) };
  } catch (error) {
    if (error instanceof HtmlSyntaxError) return { ok: false, error: error.message };
    throw error;
  }
}

function parse(s: string): { text: string; entities: MessageEntity[] } {
  // TDLib reads a NUL-terminated C string: past the end reads as '\0', which counts as space.
  const at = (i: number): string => s[i] ?? '\0';
  const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n' || c === '\0' || c === '\v';
  const byteOffset = (i: number): number => Buffer.byteLength(s.slice(0, i));
  const fail = (message: string): never => {
    throw new HtmlSyntaxError(message);
  };

  let text = '';
  const entities: MessageEntity[] = [];
  const open: OpenTag[] = [];

  for (let i = 0; i < s.length; i++) {
    const c = at(i);
    if (c === '&') {
      const decoded = decodeEntity(s, i);
      if (decoded) {
        if (decoded.code >= 0xd800 && decoded.code <= 0xdfff) {
          fail('Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units');
        }
        text += String.fromCodePoint(decoded.code);
        i = decoded.end - 1;
        continue;
      }
    }
    if (c !== '<') {
      text += c;
      continue;
    }

    const begin = i++;
    if (at(i) !== '/') {
      while (!isSpace(at(i)) && at(i) !== '>') i++;
      if (at(i) === '\0') fail(`Unclosed start tag at byte offset ${byteOffset(begin)}`);
      const tag = s.slice(begin + 1, i).toLowerCase();
      if (!supportedTags.has(tag)) fail(`Unsupported start tag "${tag}" at byte offset ${byteOffset(begin)}`);

      let argument = '';
      while (at(i) !== '>') {
        while (at(i) !== '\0' && isSpace(at(i))) i++;
        if (at(i) === '>') break;
        const nameBegin = i;
        while (!isSpace(at(i)) && !'=>/"\''.includes(at(i))) i++;
        const attribute = s.slice(nameBegin, i);
        if (attribute === '') fail(`Empty attribute name in the tag "${tag}" at byte offset ${byteOffset(begin)}`);
        while (at(i) !== '\0' && isSpace(at(i))) i++;
        if (at(i) !== '=') {
          if (at(i) === '\0') fail(`Unclosed start tag "${tag}" at byte offset ${byteOffset(begin)}`);
          if (tag === 'blockquote' && attribute === 'expandable') argument = '1';
          continue;
        }
        i++;
        while (at(i) !== '\0' && isSpace(at(i))) i++;
        if (at(i) === '\0') fail(`Unclosed start tag "${tag}" at byte offset ${byteOffset(begin)}`);

        let value = '';
        if (at(i) !== '"' && at(i) !== "'") {
          const tokenBegin = i;
          while (/[A-Za-z0-9.-]/.test(at(i))) i++;
          if (!isSpace(at(i)) && at(i) !== '>') fail(`Unexpected end of name token at byte offset ${byteOffset(tokenBegin)}`);
          value = s.slice(tokenBegin, i).toLowerCase();
        } else {
          const quote = at(i++);
          while (at(i) !== quote && at(i) !== '\0') {
            const decoded = at(i) === '&' ? decodeEntity(s, i) : undefined;
            if (decoded) {
              value += String.fromCodePoint(decoded.code);
              i = decoded.end;
            } else {
              value += at(i++);
            }
          }
          if (at(i) === quote) i++;
          if (at(i) === '\0') fail(`Unclosed start tag at byte offset ${byteOffset(begin)}`);
        }

        if ((tag === 'a' && attribute === 'href') || (tag === 'tg-emoji' && attribute === 'emoji-id')) argument = value;
        else if (tag === 'code' && attribute === 'class' && value.startsWith('language-')) argument = value.slice(9);
        else if (tag === 'span' && attribute === 'class' && value.startsWith('tg-')) argument = value.slice(3);
        else if (tag === 'blockquote' && attribute === 'expandable') argument = '1';
      }
      if (tag === 'span' && argument !== 'spoiler') {
        fail(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(begin)}`);
      }
      open.push({ tag, argument, offset: text.length });
      continue;
    }

    const last = open.at(-1);
    if (!last) fail(`Unexpected end tag at byte offset ${byteOffset(begin)}`);
    while (!isSpace(at(i)) && at(i) !== '>') i++;
    const endTag = s.slice(begin + 2, i).toLowerCase();
    while (isSpace(at(i)) && at(i) !== '\0') i++;
    if (at(i) !== '>') fail(`Unclosed end tag at byte offset ${byteOffset(begin)}`);
    const tag = last as OpenTag;
    if (endTag !== '' && endTag !== tag.tag) {
      fail(`Unmatched end tag at byte offset ${byteOffset(begin)}, expected "</${tag.tag}>", found "</${endTag}>"`);
    }
    // Empty elements make no entity.
    if (text.length > tag.offset) addEntity(entities, tag, text);
    open.pop();
  }

  const unclosed = open.at(-1);
  if (unclosed) fail(`Can't find end tag corresponding to start tag "${unclosed.tag}"`);

  // A language only counts on code inside pre.
  for (const entity of entities) if (entity.type === 'code') delete entity.language;
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { text, entities };
}

function addEntity(entities: MessageEntity[], tag: OpenTag, text: string): void {
  const offset = tag.offset;
  const length = text.length - offset;
  const previous = entities.at(-1);
  const sameSpan = previous !== undefined && previous.offset === offset && previous.length === length;
  switch (tag.tag) {
    case 'b': case 'strong': entities.push({ type: 'bold', offset, length }); return;
    case 'i': case 'em': entities.push({ type: 'italic', offset, length }); return;
    case 'u': case 'ins': entities.push({ type: 'underline', offset, length }); return;
    case 's': case 'strike': case 'del': entities.push({ type: 'strikethrough', offset, length }); return;
    case 'tg-spoiler': case 'span': entities.push({ type: 'spoiler', offset, length }); return;
    case 'blockquote':
      entities.push({ type: tag.argument ? 'expandable_blockquote' : 'blockquote', offset, length });
      return;
    case 'tg-emoji': {
      if (!/^[0-9]+$/.test(tag.argument) || /^0+$/.test(tag.argument)) {
        throw new HtmlSyntaxError('Invalid custom emoji identifier specified');
      }
      entities.push({ type: 'custom_emoji', offset, length, custom_emoji_id: tag.argument });
      return;
    }
    case 'a': {
      // An <a> without href links to its own text, as TDLib does.
      const url = tag.argument || text.slice(offset);
      if (url) entities.push({ type: 'text_link', offset, length, url });
      return;
    }
    case 'pre':
      if (sameSpan && previous.type === 'code' && previous.language !== undefined) previous.type = 'pre';
      else entities.push({ type: 'pre', offset, length });
      return;
    case 'code':
      if (sameSpan && previous.type === 'pre' && tag.argument) previous.language = tag.argument;
      else entities.push({ type: 'code', offset, length, ...(tag.argument ? { language: tag.argument } : {}) });
      return;
  }
}

/** TDLib's decode_html_entity: &lt; &gt; &amp; &quot; and numeric references, `;` optional. */
function decodeEntity(s: string, position: number): { code: number; end: number } | undefined {
  let end = position + 1;
  let code = 0;
  if (s[end] === '#') {
    end++;
    if (s[end] === 'x') {
      end++;
      while (end < s.length && /[0-9a-fA-F]/.test(s[end] ?? '')) code = code * 16 + parseInt(s[end++] ?? '0', 16);
    } else {
      while (end < s.length && /[0-9]/.test(s[end] ?? '')) code = code * 10 + Number(s[end++]);
    }
    if (code === 0 || code >= 0x10ffff || end - position >= 10) return undefined;
  } else {
    while (end < s.length && /[A-Za-z]/.test(s[end] ?? '')) end++;
    const named: Record<string, number> = { lt: 0x3c, gt: 0x3e, amp: 0x26, quot: 0x22 };
    const found = Object.hasOwn(named, s.slice(position + 1, end)) ? named[s.slice(position + 1, end)] : undefined;
    if (found === undefined) return undefined;
    code = found;
  }
  return { code, end: s[end] === ';' ? end + 1 : end };
}
