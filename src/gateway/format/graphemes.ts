let segmenter: Intl.Segmenter | undefined;

/**
 * The user-perceived characters of `text` (an emoji with its modifiers is one), with their
 * offsets. The segmenter is made on first use: it loads ICU's break rules, about 2.4 MB of
 * resident memory, which a hob whose answers never need cutting or table widths never pays.
 */
export function graphemes(text: string): Intl.Segments {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return segmenter.segment(text);
}
