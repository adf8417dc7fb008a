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

const isLetter = (code: number): boolean => (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
const isDigit = (code: number): boolean => code >= 48 && code <= 57;
const isBreak = (code: number): boolean => code === 10 || code === 13 || code === 9;
/** Han, kana, Hangul, full-width forms: about 0.7 of a token each. */
const isIdeograph = (code: number): boolean => (code >= 0x2e80 && code <= 0x9fff) || (code >= 0xac00 && code <= 0xd7af) || (code >= 0xf900 && code <= 0xfaff) || (code >= 0xff00 && code <= 0xffef);
const isSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdfff;

/**
 * Both estimates of a text. `chars`: four ASCII characters a token (JSON escapes count as the
 * two characters they are on the wire), any other character a token. `pieces`: a word (or a
 * camelCase hump) of up to seven letters is a token, longer ones one per five; digits a token
 * per three, and the space before them one; punctuation a token per two; line breaks a token
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
      if (isLetter(code)) {
        // camelCase humps are separate words to a tokenizer.
        let hump = i;
        while (j <= n) {
          const next = j < n ? text.charCodeAt(j) : 0;
          const upper = next >= 65 && next <= 90;
          const previous = text.charCodeAt(j - 1);
          if (j === n || !isLetter(next) || (upper && previous >= 97)) {
            pieces += j - hump <= 10 ? 1 : Math.ceil((j - hump) / 6);
            hump = j;
            if (j === n || !isLetter(next)) break;
          }
          j += 1;
        }
      } else if (isDigit(code)) {
        while (j < n && isDigit(text.charCodeAt(j))) j += 1;
        pieces += Math.ceil((j - i) / 3);
      } else if (code === 32) {
        while (j < n && text.charCodeAt(j) === 32) j += 1;
        // One space joins the next word, but not a number; longer runs are tokens of their own.
        pieces += Math.ceil((j - i - 1) / 8) + (j < n && isDigit(text.charCodeAt(j)) ? 1 : 0);
      } else if (isBreak(code)) {
        let breaks = 1;
        while (j < n && (isBreak(text.charCodeAt(j)) || text.charCodeAt(j) === 32)) {
          if (isBreak(text.charCodeAt(j))) breaks += 1;
          j += 1;
        }
        // A line break takes the next line's indentation with it.
        pieces += Math.ceil(breaks / 2);
      } else {
        while (j < n) {
          const next = text.charCodeAt(j);
          if (next >= 128 || isLetter(next) || isDigit(next) || next === 32 || isBreak(next)) break;
          j += 1;
        }
        pieces += Math.ceil((j - i) / 3);
      }
      for (let k = i; k < j; k += 1) {
        const c = text.charCodeAt(k);
        ascii += c === 10 || c === 34 || c === 92 || c === 9 || c === 13 ? 2 : 1;
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
