/**
 * A channel's specifics live in adapters/<platform>/ and reach the rest of hob through its
 * ChannelModule and the registry (adapters/index.ts). This test reads every file under src/
 * as TypeScript parses it, comments left out, and fails on a platform named in code: an
 * identifier (`telegramToken`, `DISCORD_X`) or a string (`'slack'`, `"telegram:42"`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
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

/** Each identifier and string in the file's code (not its comments), with its line: parsed as TypeScript parses it. */
function codeWords(text: string): { word: string; kind: 'identifier' | 'string'; line: number }[] {
  const file = ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, false);
  const words: { word: string; kind: 'identifier' | 'string'; line: number }[] = [];
  const lineOf = (node: ts.Node) => file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) words.push({ word: node.text, kind: 'identifier', line: lineOf(node) });
    else if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) words.push({ word: node.text, kind: 'string', line: lineOf(node) });
    node.forEachChild(visit);
  };
  visit(file);
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
    const escaped = "const a = '\\x73lack';\nconst b = `\\u{74}elegram`;\n";
    expect(MIGHT_NAME_A_PLATFORM.test(escaped)).toBe(true);
    expect(codeWords(escaped).filter(namesPlatform).map(({ word }) => word)).toEqual(['slack', 'telegram']);
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
