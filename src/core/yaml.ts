/**
 * Reading YAML (config.yaml, the front matter of skills, agents and commands) with js-yaml:
 * a third of the `yaml` package's source and a tenth of its time to parse hob's config and
 * front matter at start. The YAML 1.2 core schema, as the `yaml` package reads by default:
 * `on`/`yes`/`no` and dates stay strings, `0755` is 755, no `<<` merges. A syntax error
 * names its line and column and says what to fix.
 */
import { CORE_SCHEMA, load, YAMLException } from 'js-yaml';

/** A file that is not valid YAML; `message` starts with "line L, column C: " when it is known. */
export class YamlSyntaxError extends Error {
  constructor(
    readonly reason: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(line === undefined ? reason : `line ${line}, column ${column ?? 1}: ${reason}`);
    this.name = 'YamlSyntaxError';
  }
}

/**
 * Aliases share one value (js-yaml does not copy them), but every reader copies what it
 * walks: a few nested aliases ("billion laughs") would expand to more than memory holds.
 */
const MAX_EXPANDED_NODES = 100_000;

/**
 * The YAML value of `text` (undefined when it holds nothing). `firstLine` is the line of the
 * file `text` starts on, so a front matter's errors name the file's line.
 */
export function parseYaml(text: string, firstLine = 1): unknown {
  let value: unknown;
  try {
    value = load(text, { schema: CORE_SCHEMA });
  } catch (error) {
    if (!(error instanceof YAMLException)) throw error;
    throw syntaxError(error, text, firstLine);
  }
  if (expandedSize(value, new Map()) > MAX_EXPANDED_NODES) {
    throw new YamlSyntaxError(`its aliases (*name) expand to more than ${MAX_EXPANDED_NODES.toLocaleString('en')} values; write the values out instead`);
  }
  return value;
}

/** How many values `value` holds once every alias is written out; shared values counted once each time they appear. */
function expandedSize(value: unknown, sizes: Map<object, number>): number {
  if (typeof value !== 'object' || value === null) return 1;
  const known = sizes.get(value);
  if (known !== undefined) return known;
  let size = 1;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    size += expandedSize(item, sizes);
    if (size > MAX_EXPANDED_NODES) break;
  }
  sizes.set(value, size);
  return size;
}

function syntaxError(error: YAMLException, text: string, firstLine: number): YamlSyntaxError {
  const mark = error.mark as YAMLException['mark'] | undefined;
  if (error.reason === 'expected a single document in the stream, but found more') {
    const line = secondDocumentLine(text);
    const reason = 'a second document (a "---" line after the settings); a file holds one, so remove the line or what follows it';
    return new YamlSyntaxError(reason, line === undefined ? undefined : line + firstLine - 1, line === undefined ? undefined : 1);
  }
  if (!mark) return new YamlSyntaxError(error.reason);
  // js-yaml marks the end of an alias or a tag; its start is where to look.
  const written = writtenForm(error.reason);
  const lineStart = text.lastIndexOf('\n', mark.position - 1) + 1;
  const start = written === undefined ? -1 : text.slice(lineStart, mark.position).lastIndexOf(written);
  const column = start >= 0 ? start + 1 : mark.column + 1;
  return new YamlSyntaxError(reworded(error.reason, text, mark.position), mark.line + firstLine, column);
}

/** How the alias or tag a reason names is written in the file: `*name`, `!!set`, `!custom`. */
function writtenForm(reason: string): string | undefined {
  const alias = /^unidentified alias "(.*)"$/.exec(reason);
  if (alias) return `*${alias[1]}`;
  const tag = /^unknown tag !<(.*)>$/.exec(reason);
  return tag ? (tag[1] as string).replace(/^tag:yaml\.org,2002:/, '!!') : undefined;
}

/** js-yaml's reasons a person writing a config meets most, said with the fix. */
function reworded(reason: string, text: string, position: number): string {
  if (reason === 'duplicated mapping key') {
    const key = /^["']?([^"':\n]+)/.exec(text.slice(position))?.[1]?.trim();
    return `duplicate key${key ? ` "${key}"` : ''}: a key may appear once in a mapping`;
  }
  if (reason === 'bad indentation of a mapping entry') {
    // Only spaces before the mark: a key out of line; else a plain value with ": " inside.
    const before = text.slice(text.lastIndexOf('\n', position - 1) + 1, position);
    if (before.trim() !== '') return 'a value holding ": " must be quoted (key: "a: b")';
    return 'bad indentation: the keys of one mapping start at the same column';
  }
  if (reason === 'bad indentation of a sequence entry') return 'bad indentation: the "- " items of one list start at the same column';
  if (reason === 'tab characters must not be used in indentation') return 'a tab in the indentation; indent with spaces';
  if (reason === 'missed comma between flow collection entries') return 'a comma is missing between two entries of a [list] or {mapping}';
  if (reason === 'can not read an implicit mapping pair; a colon is missed') return 'a key without a ":" (write key: value)';
  if (reason === 'unexpected end of the stream within a flow collection') return 'a [list] or {mapping} is not closed: a "]" or "}" is missing';
  const quoted = /^unexpected end of the (?:stream|document) within a (double|single) quoted scalar$/.exec(reason);
  if (quoted) return `a ${quoted[1] === 'double' ? '"quoted"' : "'quoted'"} string is not closed`;
  const written = writtenForm(reason);
  if (written?.startsWith('*')) return `alias ${written} names no anchor: set &${written.slice(1)} on a value above it`;
  if (written !== undefined) return `tag ${written} is not supported here; remove it`;
  return reason;
}

/** The 1-based line of the "---" that starts a second document: the first one after content. */
function secondDocumentLine(text: string): number | undefined {
  let content = false;
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    if (/^(---|\.\.\.)(\s|$)/.test(line)) {
      if (content && line.startsWith('---')) return index + 1;
    } else if (line.trim() !== '' && !line.trimStart().startsWith('#') && !line.startsWith('%')) {
      content = true;
    }
  }
  return undefined;
}
