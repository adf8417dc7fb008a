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
  return markdown.split('\n').every((line) => line === '' || PLAIN.test(line)) && !FOLDED_OR_BLOCK.test(markdown);
}
