import { describe, expect, it } from 'vitest';
import { textEstimate } from '../../src/engine/compaction/tokens.js';

/**
 * The cheap estimate that sizes each prompt before the provider counts it (compaction and the
 * small-window budget rest on it). Each figure below is worked out by hand from the rules in
 * tokens.ts: what the scan counts, whichever way it is written.
 */
describe('the cheap token estimate of a text', () => {
  it('counts a word a piece, the space before a word as nothing, four ASCII characters a token', () => {
    expect(textEstimate('hello world')).toEqual({ chars: 3, pieces: 2 });
  });

  it('splits camelCase humps, and counts a hump past ten letters one piece per six', () => {
    // parse | HTTPResponse (12 letters: the capitals run on into the lowercase ones).
    expect(textEstimate('parseHTTPResponse')).toEqual({ chars: 5, pieces: 3 });
  });

  it('counts digits a piece per three', () => {
    expect(textEstimate('12345 items')).toEqual({ chars: 3, pieces: 3 });
  });

  it('counts punctuation a piece per three, line breaks a piece per two, and JSON escapes as two characters', () => {
    expect(textEstimate('a "b"\n')).toEqual({ chars: 3, pieces: 5 });
    expect(textEstimate('path\\to\\file')).toEqual({ chars: 4, pieces: 5 });
  });

  it('takes the indentation after line breaks with them', () => {
    expect(textEstimate('line one\n\n    indented line')).toEqual({ chars: 8, pieces: 5 });
  });

  it('counts an ideograph 0.7 of a piece and an emoji one, each a character', () => {
    expect(textEstimate('日本語 🎉')).toEqual({ chars: 5, pieces: 4 });
  });

  it('counts a long prompt as the sum of its lines', () => {
    const line = 'The person asked about parseHTTPResponse on 2026-12-03, "twice".\n';
    const one = textEstimate(line);
    const many = textEstimate(line.repeat(200));
    expect(many.pieces).toBe(one.pieces * 200);
  });
});
