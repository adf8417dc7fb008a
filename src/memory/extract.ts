/**
 * Facts taken from what a person says, by rules (no model call): statements that name a
 * host, path, environment, version, endpoint or repository, "I prefer …", "my X is Y", and
 * "call me …" (which also sets the preferred name). Questions and commands are left alone.
 */

export type Extracted = { facts: { content: string; tags: string[] }[]; name?: string };

/** A long paste is material, not statements about the person. */
const MAX_TEXT = 2000;
const MAX_FACTS = 3;
const MAX_FACT_LENGTH = 300;

const CATEGORIES: { tag: string; pattern: RegExp }[] = [
  { tag: 'endpoint', pattern: /\bhttps?:\/\/[^\s<>"']+/i },
  { tag: 'repository', pattern: /\b(?:github\.com|gitlab\.com|bitbucket\.org)\/[\w.-]+\/[\w.-]+|\bgit@[\w.-]+:[\w./-]+|\brepo(?:sitory)?\b/i },
  { tag: 'host', pattern: /\b(?:\d{1,3}\.){3}\d{1,3}\b|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|dev|local|lan|internal|home|arpa|cloud|app|eu|de|it|fr|es|ch|at|uk)\b|\b(?:host|server|hostname)\b/i },
  { tag: 'path', pattern: /(?:^|[\s"'(])(?:~|\.{1,2})?\/[\w.@-]+(?:\/[\w.@-]*)*/ },
  { tag: 'environment', pattern: /\b(?:production|prod|staging|stage|development|dev|qa|sandbox)\b/i },
  { tag: 'version', pattern: /(?<![\d.])v?\d+\.\d+(?:\.\d+)?(?!\.?\d)|\b(?:version|node|python|java|postgres(?:ql)?|ruby|go|php|debian|ubuntu)\s+\d+\b/i },
];

/** A statement, not a question or an order: it says what something is, or what the person uses. */
const STATEMENT = /\b(?:is|are|was|lives?|runs?|uses?|sits?|hosted|deployed|called|named)\b|=|\bwe\s+(?:use|run|have|deploy)\b|\bi\s+(?:use|run|have|work)\b/i;
const PREFER = /\bi (?:(?:really |much |usually )?prefer|like it when|'d rather|would rather)\b[^.!?\n]*/i;
const MY_X_IS_Y = /\bmy ([\p{L}\p{N}' -]{2,40}?) (?:is|are) ([^.!?\n]{1,160})/iu;
const CALL_ME = /\b(?:call me|my name is|i'?m called|nenn(?:t)? mich|ich hei(?:ß|ss)e|chiamami|mi chiamo|appelle-moi|je m'appelle|llámame|me llamo)\s+([\p{L}][\p{L}'-]{0,30}(?:\s[\p{Lu}][\p{L}'-]{0,30})?)/iu;

/**
 * What every match of CALL_ME, and of MY_X_IS_Y, holds: tested first, without Unicode property
 * classes. Those make V8 compile CALL_ME to ~2 ms of the first message's work (and again after
 * a major GC has dropped its code), for a name few messages give.
 */
const CALL_ME_WORDS = /call me|name is|m called|nennt? mich|ich hei|chiamami|mi chiamo|appelle|llámame|me llamo/i;
const MY = /\bmy /i;

/** Secrets are not noticed on the side: saving one takes an explicit /remember or memory_save. */
const SECRET = /\b(?:password|passwort|passwd|secret|token|api[ _-]?key|pin|passphrase|private key|password|parola d'ordine|contraseña|mot de passe)\b/i;

export function extractFacts(text: string): Extracted {
  // What hob put in front of the person's words (their name in a group, an edit, a reply, a voice note's frame) is not theirs.
  const said = text.replace(/^(?:\[[^\]\n]{1,500}\]\s*)+/, '').slice(0, MAX_TEXT).trim();
  const found: Extracted = { facts: [] };
  if (!said || said.startsWith('/')) return found;
  const name = CALL_ME_WORDS.test(said) ? CALL_ME.exec(said)?.[1] : undefined;
  if (name && !/^(?:a|an|the|not|just)$/i.test(name)) found.name = name;
  for (const sentence of sentences(said)) {
    if (found.facts.length >= MAX_FACTS) break;
    if (sentence.endsWith('?') || sentence.length > MAX_FACT_LENGTH || SECRET.test(sentence)) continue;
    const tags: string[] = [];
    if (PREFER.test(sentence)) tags.push('preference');
    if (MY.test(sentence) && MY_X_IS_Y.test(sentence) && !(CALL_ME_WORDS.test(sentence) && CALL_ME.test(sentence))) tags.push('personal');
    if (STATEMENT.test(sentence)) for (const { tag, pattern } of CATEGORIES) if (pattern.test(sentence)) tags.push(tag);
    if (tags.length) found.facts.push({ content: sentence, tags });
  }
  return found;
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((part) => part.trim().replace(/[.!]+$/, ''))
    .filter((part) => part.length >= 8);
}
