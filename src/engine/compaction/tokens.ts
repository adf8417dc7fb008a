/**
 * Cheap estimates of a prompt's size, without a tokenizer (prompt-sizer.ts turns them into the
 * provider's tokens). A tokenizer would be exact for one family of models only, costs ~65 MB
 * and ~180 ms to load, and is not needed: the part estimated is small, and the scale is learnt.
 *
 * Two cheap estimates run side by side, and calibration keeps whichever this model's counts
 * follow better: `chars` (a quarter token per ASCII character) and `pieces` (words, number
 * groups and punctuation runs, as byte-pair tokenizers split text; within ~20% of real
 * tokenizers on prose, code, logs and JSON, where characters/4 swings from a quarter to double).
 */
import type { Block, Message } from '../../core/messages.js';
import type { ToolSpec } from '../../providers/types.js';

export type PromptParts = { system: string; tools: readonly ToolSpec[]; messages: readonly Message[] };

/** The two estimates of one piece of a prompt. */
export type Estimate = { chars: number; pieces: number };
export type EstimateKind = keyof Estimate;

/** Han, kana, Hangul, full-width forms: about 0.7 of a token each. */
const isIdeograph = (code: number): boolean => (code >= 0x2e80 && code <= 0x9fff) || (code >= 0xac00 && code <= 0xd7af) || (code >= 0xf900 && code <= 0xfaff) || (code >= 0xff00 && code <= 0xffef);
const isSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdfff;

/**
 * What each ASCII character is to the scan below, looked up instead of tested by calls: a new
 * conversation's system prompt (thousands of characters) is scanned while V8 still interprets
 * this code, and there each call costs; the table halved that first scan (~4 → ~2 ms for 16,000
 * characters), with the same counts.
 */
const LETTER = 1;
const UPPER = 2;
const DIGIT = 3;
const SPACE = 4;
const BREAK = 5;
const PUNCTUATION = 6;
const KIND = new Uint8Array(128).fill(PUNCTUATION);
for (let code = 97; code <= 122; code += 1) KIND[code] = LETTER;
for (let code = 65; code <= 90; code += 1) KIND[code] = UPPER;
for (let code = 48; code <= 57; code += 1) KIND[code] = DIGIT;
KIND[32] = SPACE;
KIND[10] = KIND[13] = KIND[9] = BREAK;
/** The characters JSON writes as two on the wire: line feed, quote, backslash, tab, carriage return. */
const WIRE = new Uint8Array(128).fill(1);
WIRE[10] = WIRE[34] = WIRE[92] = WIRE[9] = WIRE[13] = 2;

/** The kind of the character at `at`; 0 for any other than ASCII. */
const kindAt = (text: string, at: number): number => {
  const code = text.charCodeAt(at);
  return code < 128 ? (KIND[code] as number) : 0;
};

/**
 * Both estimates of a text. `chars`: four ASCII characters a token (JSON escapes count as the
 * two characters they are on the wire), any other character a token. `pieces`: a word (or a
 * camelCase hump) of up to ten letters is a token, longer ones one per six; digits a token
 * per three, and the space before them one; punctuation a token per three; line breaks a token
 * per two, with the indentation after them; other runs of spaces a token per eight;
 * ideographs 0.7; other non-ASCII letters a token per four; an emoji a token.
 */
export function textEstimate(text: string): Estimate {
  let ascii = 0;
  let other = 0;
  let pieces = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const code = text.charCodeAt(i);
    let j = i + 1;
    if (code < 128) {
      const kind = KIND[code] as number;
      if (kind === LETTER || kind === UPPER) {
        // camelCase humps are separate words to a tokenizer.
        let hump = i;
        let previous = kind;
        for (;;) {
          // The hottest loop: the lookup written out (0 past the end and for any other than ASCII).
          const c = j < n ? text.charCodeAt(j) : 128;
          const next = c < 128 ? (KIND[c] as number) : 0;
          const letter = next === LETTER || next === UPPER;
          if (!letter || (next === UPPER && previous === LETTER)) {
            pieces += j - hump <= 10 ? 1 : Math.ceil((j - hump) / 6);
            hump = j;
            if (!letter) break;
          }
          previous = next;
          j += 1;
        }
        ascii += j - i;
      } else if (kind === DIGIT) {
        while (j < n && kindAt(text, j) === DIGIT) j += 1;
        pieces += Math.ceil((j - i) / 3);
        ascii += j - i;
      } else if (kind === SPACE) {
        while (j < n && text.charCodeAt(j) === 32) j += 1;
        // One space joins the next word, but not a number; longer runs are tokens of their own.
        pieces += Math.ceil((j - i - 1) / 8) + (j < n && kindAt(text, j) === DIGIT ? 1 : 0);
        ascii += j - i;
      } else if (kind === BREAK) {
        let breaks = 1;
        let wire = 2;
        for (; j < n; j += 1) {
          const next = kindAt(text, j);
          if (next === BREAK) {
            breaks += 1;
            wire += 2;
          } else if (next === SPACE) wire += 1;
          else break;
        }
        // A line break takes the next line's indentation with it.
        pieces += Math.ceil(breaks / 2);
        ascii += wire;
      } else {
        let wire = WIRE[code] as number;
        for (; j < n; j += 1) {
          const next = text.charCodeAt(j);
          if (next >= 128 || KIND[next] !== PUNCTUATION) break;
          wire += WIRE[next] as number;
        }
        pieces += Math.ceil((j - i) / 3);
        ascii += wire;
      }
    } else if (isIdeograph(code)) {
      pieces += 0.7;
      other += 1;
    } else if (isSurrogate(code)) {
      // An emoji or a rare ideograph: two code units, one character.
      j = i + 2;
      pieces += 1;
      other += 1;
    } else {
      while (j < n) {
        const next = text.charCodeAt(j);
        if (next < 128 || isIdeograph(next) || isSurrogate(next)) break;
        j += 1;
      }
      pieces += Math.ceil((j - i) / 4);
      other += j - i;
    }
    i = j;
  }
  return { chars: Math.ceil(ascii / 4) + other, pieces: Math.ceil(pieces) };
}

/** The `pieces` estimate alone: the better guess before any count has been seen. */
export function cheapTokens(text: string): number {
  return textEstimate(text).pieces;
}

const add = (a: Estimate, b: Estimate): Estimate => ({ chars: a.chars + b.chars, pieces: a.pieces + b.pieces });
const plus = (a: Estimate, tokens: number): Estimate => ({ chars: a.chars + tokens, pieces: a.pieces + tokens });
const ZERO: Estimate = { chars: 0, pieces: 0 };

/** A message's framing on the wire: `{"role":"user","content":[…]}`. */
const MESSAGE_OVERHEAD = 8;
/** What an image costs, roughly (Anthropic: ~1,600 tokens for a 1,000×1,000 picture). */
const IMAGE_TOKENS = 1_600;

/**
 * Blocks are never changed in place, so each is estimated once (a long history re-reads only
 * the memo), and the estimate is kept on the block itself, under a key that is neither
 * enumerable nor a string: JSON, spreads, structured clones and equality checks do not see it,
 * and it goes with the block. A WeakMap kept them before, but its table never shrinks: with
 * histories read back from the store (gateway/pool.ts's budget), every read adds new blocks,
 * and the table grew to hold all of those made between two full collections (2 MB over a
 * 2,500-message soak, `bench/profile.ts heap`).
 */
const ESTIMATE = Symbol('estimate');
type Estimated = { [ESTIMATE]?: Estimate };
const specMemo = new WeakMap<ToolSpec, Estimate>();

function estimateBlock(block: Block): Estimate {
  const known = (block as Estimated)[ESTIMATE];
  if (known) return known;
  let estimate: Estimate;
  switch (block.type) {
    case 'text':
      estimate = plus(textEstimate(block.text), 6);
      break;
    case 'image':
      estimate = { chars: IMAGE_TOKENS, pieces: IMAGE_TOKENS };
      break;
    case 'tool_use':
      estimate = plus(textEstimate(`${block.id} ${block.name} ${JSON.stringify(block.input ?? {})}`), 10);
      break;
    case 'tool_result':
      estimate = plus(textEstimate(`${block.toolUseId} ${block.content}`), 12);
      break;
    case 'thinking':
      estimate = plus(textEstimate(block.thinking), 6);
      break;
    case 'redacted_thinking':
      estimate = { chars: Math.ceil(block.data.length / 4), pieces: Math.ceil(block.data.length / 4) };
      break;
    default: {
      const unknownBlock: never = block;
      return unknownBlock;
    }
  }
  if (Object.isExtensible(block)) Object.defineProperty(block, ESTIMATE, { value: estimate });
  return estimate;
}

/** Both raw estimates of the messages from index `from` on (all of them by default). */
export function estimateMessagesBoth(messages: readonly Message[], from = 0): Estimate {
  let chars = 0;
  let pieces = 0;
  for (let index = from; index < messages.length; index += 1) {
    const message = messages[index] as Message;
    chars += MESSAGE_OVERHEAD;
    pieces += MESSAGE_OVERHEAD;
    for (const block of message.content) {
      const estimate = estimateBlock(block);
      chars += estimate.chars;
      pieces += estimate.pieces;
    }
  }
  return { chars, pieces };
}

function estimateToolsBoth(tools: readonly ToolSpec[]): Estimate {
  let total = ZERO;
  for (const spec of tools) {
    let estimate = specMemo.get(spec);
    if (!estimate) {
      estimate = textEstimate(JSON.stringify(spec));
      specMemo.set(spec, estimate);
    }
    total = add(total, estimate);
  }
  return total;
}

/**
 * The system prompts estimated last. A request's prompt is sized before it is sent and again
 * when its count comes back, and a tool loop sends the same one each step: each is read once.
 */
const systemMemo = new Map<string, Estimate>();
const SYSTEM_MEMO_SIZE = 16;

function estimateSystem(system: string): Estimate {
  const known = systemMemo.get(system);
  if (known) return known;
  const estimate = textEstimate(system);
  if (systemMemo.size >= SYSTEM_MEMO_SIZE) systemMemo.delete(systemMemo.keys().next().value as string);
  systemMemo.set(system, estimate);
  return estimate;
}

/** Both raw estimates of a whole prompt, before calibration (`messages`: its messages' estimate, when the caller has it already). */
export function estimateBoth(prompt: PromptParts, messages = estimateMessagesBoth(prompt.messages)): Estimate {
  return add(add(estimateSystem(prompt.system), estimateToolsBoth(prompt.tools)), messages);
}

/** The raw `pieces` estimate of a whole prompt, before calibration. */
export function estimatePrompt(prompt: PromptParts): number {
  return estimateBoth(prompt).pieces;
}

/** The raw `pieces` estimate of tool definitions. */
export function estimateTools(tools: readonly ToolSpec[]): number {
  return estimateToolsBoth(tools).pieces;
}
