/**
 * Turning zod issues into lines a person can act on: `<file>: <key.path>: <problem>`, the
 * problem naming what was expected and what was written, never echoing a secret.
 */
import { closest, distance } from 'fastest-levenshtein';
import { z } from 'zod';
import { UserFacingError } from '../core/errors.js';
import { formatPath, type ConfigPath, type PathProblem } from './interpolate.js';

/** Everything wrong with a config file, one problem per line. */
export class ConfigError extends UserFacingError {
  override name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
  }
}

export function problemLine(file: string | undefined, problem: PathProblem): string {
  const parts = [file, formatPath(problem.path), problem.message].filter((part) => part !== undefined && part !== '');
  return parts.join(': ');
}

const EXPECTED_TYPE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'a mapping (key: value lines)',
  record: 'a mapping (key: value lines)',
  array: 'a list',
};

/** Phrases zod's built-in issues the same way as the schema's own messages. */
export const expectedPhrase: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${EXPECTED_TYPE[issue.expected] ?? issue.expected}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `expected ${JSON.stringify(issue.values[0])}`
        : `expected one of ${issue.values.map(String).join(', ')}`;
    default:
      return undefined;
  }
};

/** Keys whose values are secrets (`api_key`, `bot_token`, `signing_secret`, an `Authorization` header). */
const SECRET_KEY = /(token|secret|key|password|passwd|credentials?|authorization|cookie)$/i;
/** A URL with a user name or password in it: `postgresql://hob:PASSWORD@db/hob`. */
const URL_WITH_CREDENTIALS = /^[a-z][a-z0-9+.-]*:\/\/[^/\s@]+@/i;
/** What tokens and keys look like, wherever they were put by mistake. */
const TOKEN_SHAPES = [
  /^(xox[abprse]|xapp|sk|sk_live|sk_test|rk_live|ghp|gho|ghu|ghs|ghr|github_pat|glpat|hf|npm)[-_][A-Za-z0-9]/, // Slack, OpenAI/Anthropic, Stripe, GitHub, GitLab, Hugging Face, npm
  /^(AKIA|ASIA)[A-Z0-9]{12,}$/, // AWS access key ids
  /^AIza[\w-]{20,}$/, // Google API keys
  /^\d{5,}:[\w-]{20,}$/, // a Telegram bot token
  /^eyJ[\w-]+\.[\w-]+/, // a JWT
  /^bearer\s+\S/i,
  /(password|passwd|secret|token|api[_-]?key)=/i, // in a query string or a connection string
  /^[0-9a-f]{32,}$/i, // a hex key
];

/** True when a string looks like a secret: a long mix of upper case, lower case and digits counts too. */
function looksSecret(value: string): boolean {
  if (TOKEN_SHAPES.some((shape) => shape.test(value))) return true;
  return value.length >= 20 && !/\s/.test(value) && /[a-z]/.test(value) && /[A-Z]/.test(value) && /\d/.test(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What was written. With the type for type errors ("string "fifty""), bare otherwise
 * ("yolo"). A value that may be a secret is described, never shown: under a secret's key,
 * read from the environment, a URL with credentials, or shaped like a token or key.
 */
function describeValue(value: unknown, withType: boolean, hidden: 'key' | 'environment' | undefined): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (isPlainObject(value)) return 'a mapping';
  if (typeof value === 'string') {
    if (hidden === 'environment') return `a value from the environment (${value.length} characters, not shown)`;
    if (URL_WITH_CREDENTIALS.test(value)) return 'a URL with a user name or password in it (not shown)';
    if (hidden === 'key' || looksSecret(value)) return `a string of ${value.length} characters (not shown)`;
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return withType ? `string ${JSON.stringify(shown)}` : JSON.stringify(shown);
  }
  if (hidden !== undefined) return `a ${typeof value} (not shown)`;
  return withType ? `${typeof value} ${String(value)}` : String(value);
}

function valueAt(data: unknown, path: ConfigPath): unknown {
  let value = data;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string | number, unknown>)[segment];
  }
  return value;
}

function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  for (;;) {
    if (
      schema instanceof z.ZodOptional ||
      schema instanceof z.ZodNullable ||
      schema instanceof z.ZodDefault ||
      schema instanceof z.ZodPrefault
    ) {
      schema = schema.unwrap();
    } else if (schema instanceof z.ZodPipe) {
      schema = schema.in;
    } else if (schema instanceof z.ZodLazy) {
      // The sections are built on first use (schema.ts); this is the one built (`unwrap()` would build another).
      schema = schema._zod.innerType;
    } else {
      return schema;
    }
  }
}

/** A discriminated union is an object once the discriminator in the data picks the option. */
function pickOption(schema: z.core.$ZodType, value: unknown): z.core.$ZodType {
  if (!(schema instanceof z.ZodDiscriminatedUnion) || !isPlainObject(value)) return schema;
  const tag = value[schema.def.discriminator];
  for (const option of schema.options) {
    const inner = unwrap(option);
    if (inner instanceof z.ZodObject) {
      const field = inner.shape[schema.def.discriminator];
      if (field instanceof z.ZodLiteral && field.values.has(tag as z.core.util.Literal)) return inner;
    }
  }
  return schema;
}

/** The keys valid at `path`, found by walking the schema alongside the data. */
function validKeysAt(schema: z.core.$ZodType, path: ConfigPath, data: unknown): string[] {
  let current: z.core.$ZodType | undefined = unwrap(schema);
  let value = data;
  for (const segment of path) {
    current = pickOption(current, value);
    if (current instanceof z.ZodObject && typeof segment === 'string') current = current.shape[segment];
    else if (current instanceof z.ZodArray) current = current.element;
    else if (current instanceof z.ZodRecord) current = current.valueType;
    else return [];
    if (current === undefined) return [];
    current = unwrap(current);
    value = valueAt(value, [segment]);
  }
  current = pickOption(current, value);
  return current instanceof z.ZodObject ? Object.keys(current.shape) : [];
}

/** The closest valid key, if it is close enough to be what was meant. */
export function suggestKey(key: string, validKeys: readonly string[]): string | undefined {
  if (validKeys.length === 0) return undefined;
  const best = closest(key, [...validKeys]);
  const edits = distance(key.toLowerCase(), best.toLowerCase());
  const limit = Math.max(2, Math.floor(Math.max(key.length, best.length) / 4));
  if (edits <= limit && edits * 2 < key.length) return best;
  // A shortened key ("pre_tool" for "pre_tool_use") is far by edits but plainly meant.
  const extended = validKeys.filter((valid) => key.length >= 3 && valid.startsWith(key));
  return extended.length === 1 ? extended[0] : undefined;
}

function unknownKeyMessage(key: string, validKeys: readonly string[]): string {
  const suggestion = suggestKey(key, validKeys);
  if (suggestion !== undefined) return `unknown key; did you mean "${suggestion}"?`;
  return validKeys.length > 0 ? `unknown key; valid keys are ${validKeys.join(', ')}` : 'unknown key';
}

/**
 * One problem per zod issue (one per key for unknown keys). `data` is what was validated,
 * so the received value can be shown whatever zod chose to keep in the issue; `written` is
 * the file before `${VAR}` interpolation, so a value that came from the environment is not.
 */
export function problemsFromIssues(
  issues: readonly z.core.$ZodIssue[],
  schema: z.core.$ZodType,
  data: unknown,
  written: unknown = data,
): PathProblem[] {
  const problems: PathProblem[] = [];
  for (const issue of issues) {
    const path = issue.path.filter((segment): segment is string | number => typeof segment !== 'symbol');
    if (issue.code === 'unrecognized_keys') {
      const validKeys = validKeysAt(schema, path, data);
      for (const key of issue.keys) problems.push({ path: [...path, key], message: unknownKeyMessage(key, validKeys) });
      continue;
    }
    if (issue.code === 'custom' && issue.params?.['complete'] === true) {
      problems.push({ path, message: issue.message });
      continue;
    }
    let expected = issue.message;
    if (issue.code === 'invalid_union' && issue.discriminator !== undefined && 'options' in issue) {
      expected = `expected one of ${(issue.options ?? []).map(String).join(', ')}`;
    }
    const value = valueAt(data, path);
    if (value === undefined) {
      problems.push({ path, message: `missing; ${expected}` });
      continue;
    }
    const last = path[path.length - 1];
    const asWritten = valueAt(written, path);
    const hidden = typeof asWritten === 'string' && asWritten.includes('${') ? 'environment' : typeof last === 'string' && SECRET_KEY.test(last) ? 'key' : undefined;
    const received = describeValue(value, issue.code === 'invalid_type', hidden);
    problems.push({ path, message: `${expected}, got ${received}` });
  }
  return problems;
}
