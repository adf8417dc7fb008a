/**
 * A channel's specifics live in adapters/<platform>/ and reach the rest of hob through its
 * ChannelModule and the registry (adapters/index.ts). This test reads every file under src/
 * as a TypeScript parser does, comments left out, and fails on a platform named in code: an
 * identifier (`telegramToken`, `DISCORD_X`) or a string (`'slack'`, `"telegram:42"`), also in
 * a type (`type T = 'slack'`). The parser is oxc's (rolldown's parseAst, native): importing and
 * running TypeScript's own for ~300 files cost 1.1–2.6 s of CPU, this a fifth of that.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAst } from 'rolldown/parseAst';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
/** Platforms whose name is no ordinary word: any mention in code is one. */
const PLATFORM_WORD = /telegram|slack|discord/i;
/**
 * "web" is also a word for the internet (web_fetch, "search the web"): as a platform it shows
 * as the id itself or a session key (`'web'`, `` `web:${id}` ``), or an identifier built on the
 * channel (`webChannel`, `WebAdapter`).
 */
const WEB_AS_PLATFORM = /^web(:.*)?$/i;
const WEB_IN_IDENTIFIER = /(^|[a-z_])web(Channel|Adapter|Page|Module)|^WEB_(CHANNEL|ADAPTER|PAGE)/i;

/** Text that could name a platform once parsed: one of the words, or an escape that could spell it. */
const MIGHT_NAME_A_PLATFORM = /telegram|slack|discord|web|\\u|\\x/i;

/** Words that are no platform where they stand, by file. */
const NOT_A_PLATFORM: Record<string, string[]> = {
  // The search results' field in Brave's answer ({ web: { results } }).
  'src/tools/web-search.ts': ['web'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

type CodeWord = { word: string; kind: 'identifier' | 'string'; line: number };

/**
 * Each identifier and string in the file's code (not its comments), with its line: the ESTree
 * nodes that carry a name or text (identifiers, string literals, template parts, with their
 * escapes decoded), found by walking every child of every node.
 */
function codeWords(text: string): CodeWord[] {
  const lineStarts = [0];
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lineStarts.push(at + 1);
  /** The 1-based line of an offset: a binary search over where each line starts. */
  const lineOf = (offset: number) => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((lineStarts[middle] as number) <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  };
  const words: CodeWord[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (typeof value !== 'object' || value === null) return;
    const node = value as { type?: unknown; start?: number; name?: unknown; value?: unknown };
    if ((node.type === 'Identifier' || node.type === 'PrivateIdentifier') && typeof node.name === 'string') words.push({ word: node.name, kind: 'identifier', line: lineOf(node.start ?? 0) });
    else if (node.type === 'Literal' && typeof node.value === 'string') words.push({ word: node.value, kind: 'string', line: lineOf(node.start ?? 0) });
    else if (node.type === 'TemplateElement') {
      const part = node.value as { cooked?: string | null; raw: string };
      words.push({ word: part.cooked ?? part.raw, kind: 'string', line: lineOf(node.start ?? 0) });
    }
    for (const child of Object.values(node)) if (typeof child === 'object') visit(child);
  };
  visit(parseAst(text, { lang: 'ts' }, 'file.ts'));
  return words;
}

function namesPlatform({ word, kind }: { word: string; kind: 'identifier' | 'string' }): boolean {
  if (PLATFORM_WORD.test(word)) return true;
  if (kind === 'string') return WEB_AS_PLATFORM.test(word.trim());
  return WEB_IN_IDENTIFIER.test(word);
}

describe('src/ names no platform', () => {
  it('finds a platform named in code, and not one named in a comment', () => {
    const found = codeWords("// telegram in a comment\nconst x = 'slack';\nconst discordToken = `web:${id}`;\n/* web */ web_fetch('the web', webChannel);\n")
      .filter(namesPlatform)
      .map(({ word, line }) => `${line}:${word}`);
    expect(found).toEqual(['2:slack', '3:discordToken', '3:web:', '4:webChannel']);
    // A platform spelled with escapes is still found: such a file is not skipped unparsed.
    const escaped = "const a = '\\x73lack';\nconst b = `\\u{74}elegram`;\nconst \\u0064iscordId = 1;\n";
    expect(MIGHT_NAME_A_PLATFORM.test(escaped)).toBe(true);
    expect(codeWords(escaped).filter(namesPlatform).map(({ word }) => word)).toEqual(['slack', 'telegram', 'discordId']);
    // In a type too, among the TypeScript syntax the parser must read (generics, enums, satisfies).
    const typed = "type T = Map<string, 'telegram'>;\nenum E { SlackX = 1 }\nconst c = {} satisfies Record<string, `web:${string}`>;\n";
    expect(codeWords(typed).filter(namesPlatform).map(({ word, line }) => `${line}:${word}`)).toEqual(['1:telegram', '2:SlackX', '3:web:']);
    expect(MIGHT_NAME_A_PLATFORM.test("const a = 'hello';\n")).toBe(false);
  });

  it('has no file under src/ that names telegram, slack, discord or web in its code', () => {
    const offenders = sourceFiles(join(ROOT, 'src')).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      // Parsing is the cost (~300 files): one whose text holds none of the words, and no escape
      // that could spell one (`\u0073lack`, `'\x73lack'`), cannot name a platform anywhere.
      if (!MIGHT_NAME_A_PLATFORM.test(text)) return [];
      return codeWords(text)
        .filter((word) => namesPlatform(word) && !NOT_A_PLATFORM[relative(ROOT, file)]?.includes(word.word))
        .map(({ word, line }) => `${relative(ROOT, file)}:${line} ${JSON.stringify(word)}`);
    });
    expect(offenders).toEqual([]);
  });
});
