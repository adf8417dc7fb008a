/**
 * Text no Markdown renderer changes: words, digits, spaces inside a line and sentence
 * punctuation only — nothing that makes emphasis, code, links, lists, headings, quotes, HTML
 * or an autolinked address, and no leading, trailing or repeated whitespace Markdown would
 * fold. Most short answers are such text; the renderers give it back as it is (escaped) without
 * parsing it, which saves a parse per message (one adapter's markup fallback alone allocates ~170 KB).
 */
const PLAIN = /^[\p{L}\p{N}\p{M} .,;?!'\u2019"%]+$/u;
const FOLDED_OR_BLOCK = /^ |\s$|^\s*\n| \n|\n | {2}|\n{3}|^\d+[.)]|\n\d+[.)]|www\./iu;

export function isPlainText(markdown: string): boolean {
  return asciiPlain(markdown) ?? (markdown.split('\n').every((line) => line === '' || PLAIN.test(line)) && !FOLDED_OR_BLOCK.test(markdown));
}

const SPACE = 32;
const NEWLINE = 10;
const DOT = 46;
/** The ASCII characters PLAIN takes besides letters and digits. */
const PUNCTUATION = new Set([SPACE, DOT, 44, 59, 63, 33, 39, 34, 37]); // space . , ; ? ! ' " %

const isDigit = (code: number): boolean => code >= 48 && code <= 57;
const isLetter = (code: number): boolean => (code | 32) >= 97 && (code | 32) <= 122;

/**
 * The same answer as the expressions above for text of ASCII characters only, in one pass
 * without them; undefined for any other text (the expressions decide). V8 drops the compiled
 * code of a Unicode expression in a major GC and compiles it again on its next use (~50 µs for
 * these two): in a burst of new people most answers paid that, for a test of "Done.".
 */
function asciiPlain(text: string): boolean | undefined {
  let plain = true;
  let blank = true; // nothing but whitespace so far (`^\s*\n`)
  let lineStart = true;
  let leadingDigits = false; // the line so far is digits (`^\d+[.)]`, `\n\d+[.)]`)
  let newlines = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code > 127) return undefined;
    if (!plain) continue; // the answer is no, unless a later character is not ASCII
    const previous = at > 0 ? text.charCodeAt(at - 1) : -1;
    if (code === NEWLINE) {
      if (blank || previous === SPACE || ++newlines === 3) plain = false;
      lineStart = true;
      leadingDigits = false;
      continue;
    }
    newlines = 0;
    if (code === SPACE) {
      if (at === 0 || previous === SPACE || previous === NEWLINE) plain = false;
    } else if (isDigit(code)) {
      if (lineStart) leadingDigits = true;
    } else if (code === DOT) {
      if (leadingDigits || (at >= 3 && text.slice(at - 3, at).toLowerCase() === 'www')) plain = false;
    } else if (!isLetter(code) && !PUNCTUATION.has(code)) plain = false;
    if (code !== SPACE) blank = false;
    if (!isDigit(code)) leadingDigits = false;
    lineStart = false;
  }
  const last = text.charCodeAt(text.length - 1);
  if (last === SPACE || last === NEWLINE) plain = false;
  return plain;
}
