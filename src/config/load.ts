/**
 * Finding, reading, interpolating and validating config.yaml. Every problem in the file is
 * reported at once in one ConfigError, ordered as they appear in the file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { z } from 'zod';
import { UserFacingError } from '../core/errors.js';
import { parseYaml, YamlSyntaxError } from '../core/yaml.js';
import { ConfigError, expectedPhrase, problemLine, problemsFromIssues } from './errors.js';
import { interpolateEnv, type ConfigPath, type PathProblem } from './interpolate.js';
import { hobConfigSchemaFor, MODEL_KEY_ENV, type ChannelSection, type HobConfig } from './schema.js';
import { withVoiceKeys } from './voice-schema.js';

export type LoadConfigOptions = {
  /** An explicit config file (`--config`). It must exist. */
  path?: string;
  /** Environment for ${VAR}, HOB_CONFIG, HOME and the model key fallback. Defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** Config text to use instead of reading a file; `path` then only names it in errors. */
  text?: string;
  /** The chat channels whose `channels.<name>` sections the config may hold (the registry); none: the console only. */
  channels?: readonly ChannelSection[];
};

export type LoadedConfig = {
  config: HobConfig;
  /** The file the config came from; undefined when hob runs on defaults. */
  path: string | undefined;
};

/** One list, so its schema is built once (the schemas are kept per list). */
const NO_CHANNELS: readonly ChannelSection[] = [];

function homeOf(env: NodeJS.ProcessEnv): string {
  return env['HOME'] || env['USERPROFILE'] || homedir();
}

function expandPath(path: string, home: string, baseDir: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return isAbsolute(path) ? resolve(path) : resolve(baseDir, path);
}

export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(homeOf(env), '.hob', 'config.yaml');
}

/** Explicit path, else HOB_CONFIG, else ~/.hob/config.yaml if it exists, else none. */
export function resolveConfigPath(options: LoadConfigOptions = {}): string | undefined {
  const env = options.env ?? process.env;
  const home = homeOf(env);
  // Given text is the whole config; its path (if any) only names it.
  if (options.text !== undefined) return options.path && expandPath(options.path, home, process.cwd());
  const explicit = options.path ?? (env['HOB_CONFIG'] || undefined);
  if (explicit !== undefined) {
    const path = expandPath(explicit, home, process.cwd());
    if (!existsSync(path)) {
      const source = options.path === undefined ? ' (named by HOB_CONFIG)' : '';
      throw new ConfigError([`Config file ${path}${source} does not exist.`]);
    }
    return path;
  }
  const fallback = defaultConfigPath(env);
  return existsSync(fallback) ? fallback : undefined;
}

function readConfigText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError([`Cannot read config file ${path}: ${reason}`]);
  }
}

/**
 * Where `path` sits in the file, as the index of each of its keys among its mapping's keys
 * (the parser keeps them in file order), down to the deepest one the file has: problems are
 * listed in the order of these, a problem on a mapping before those inside it.
 */
function placeOf(data: unknown, path: ConfigPath): number[] {
  const place: number[] = [];
  let node = data;
  for (const segment of path) {
    if (Array.isArray(node) && typeof segment === 'number' && segment < node.length) {
      place.push(segment);
      node = node[segment];
    } else if (isPlainObject(node) && Object.hasOwn(node, segment)) {
      place.push(Object.keys(node).indexOf(String(segment)));
      node = node[segment];
    } else {
      break;
    }
  }
  return place;
}

function byPlace(a: number[], b: number[]): number {
  for (let index = 0; index < Math.min(a.length, b.length); index++) {
    if (a[index] !== b[index]) return (a[index] as number) - (b[index] as number);
  }
  return a.length - b.length;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An empty YAML key (`model:` with everything commented out) means "not set". A channel
 * section left empty still counts as written, so its missing credentials are reported.
 */
function dropNulls(value: unknown, path: ConfigPath): unknown {
  if (Array.isArray(value)) return value.map((item, index) => dropNulls(item, [...path, index]));
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const isChannel = path.length === 1 && path[0] === 'channels';
    const next = item === null && isChannel ? {} : dropNulls(item, [...path, key]);
    if (next !== null) defineKey(copy, key, next);
  }
  return copy;
}

/** Plain assignment would let a YAML key "__proto__" replace the prototype instead of being an unknown key. */
function defineKey(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function startsWith(path: ConfigPath, prefix: ConfigPath): boolean {
  return prefix.length <= path.length && prefix.every((segment, index) => path[index] === segment);
}

/** Parses and validates config text. `file` names it in errors and anchors relative paths. */
export function parseConfig(text: string, options: { file?: string; env?: NodeJS.ProcessEnv; channels?: readonly ChannelSection[] } = {}): HobConfig {
  const env = options.env ?? process.env;
  const schema = hobConfigSchemaFor(options.channels ?? NO_CHANNELS);
  const file = options.file;
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    if (!(error instanceof YamlSyntaxError)) throw error;
    const where = error.line === undefined ? '' : `line ${error.line}, column ${error.column ?? 1}: `;
    throw new ConfigError([problemLine(file, { path: [], message: `${where}YAML syntax error: ${error.reason}` })]);
  }
  const raw = dropNulls(parsed ?? {}, []);
  const { value: data, problems: referenceProblems } = interpolateEnv(raw, env);
  const finishing = { env, home: homeOf(env), baseDir: file ? dirname(file) : process.cwd() };
  // A config with nothing wrong is checked section by section; anything wrong, and the whole
  // schema finds and words every problem at once.
  const checked = referenceProblems.length === 0 ? parseBySection(schema, data, finishing) : undefined;
  if (checked) return checked;
  const result = schema.safeParse(data, PARSE);
  const problems: PathProblem[] = [...referenceProblems];
  if (!result.success) {
    for (const problem of problemsFromIssues(result.error.issues, schema, data, raw)) {
      // A value whose ${VAR} failed is already reported; its validation would only echo it.
      if (!referenceProblems.some((reference) => startsWith(problem.path, reference.path))) problems.push(problem);
    }
  }
  if (problems.length > 0 || !result.success) {
    const ordered = problems
      .map((problem, index) => ({ problem, index, place: placeOf(raw, problem.path) }))
      .sort((a, b) => byPlace(a.place, b.place) || a.index - b.index);
    throw new ConfigError(ordered.map(({ problem }) => problemLine(file, problem)));
  }
  const config: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(result.data)) defineKey(config, key, finish(key, value, result.data.data_dir, finishing));
  return config as HobConfig;
}

// Without zod's fast path: it compiles a parser for each object schema on its first parse
// (`new Function`), which a config read once per process never earns back.
const PARSE = { error: expectedPhrase, jitless: true } as const;

type Finishing = { env: NodeJS.ProcessEnv; home: string; baseDir: string };

/**
 * What the loader adds to a parsed section: absolute paths (the workspace inside data_dir
 * unless written), and the keys the environment holds for the model and voice.
 */
function finish(key: string, value: unknown, dataDir: string, { env, home, baseDir }: Finishing): unknown {
  switch (key) {
    case 'data_dir':
      return expandPath(dataDir, home, baseDir);
    case 'model': {
      const model = value as HobConfig['model'];
      return { ...model, api_key: model.api_key ?? (env[MODEL_KEY_ENV[model.provider]] || undefined) };
    }
    case 'tools': {
      const tools = value as Omit<HobConfig['tools'], 'workspace'> & { workspace?: string };
      return { ...tools, workspace: expandPath(tools.workspace ?? `${dataDir}/workspace`, home, baseDir) };
    }
    case 'voice':
      return value && withVoiceKeys(value as NonNullable<HobConfig['voice']>, env);
    default:
      return value;
  }
}

/**
 * The config checked one written section at a time, each with its own schema (built on first
 * use: schema.ts), and an unwritten section's defaults filled in when it is first read. Most
 * configs write a few sections: the others' schemas are then built once the app reads them,
 * after `hob start` has its channels connecting, or never by a command that does not read
 * them. Undefined when anything is wrong (an unknown key, a section that fails its schema).
 */
function parseBySection(schema: ReturnType<typeof hobConfigSchemaFor>, data: unknown, finishing: Finishing): HobConfig | undefined {
  if (!isPlainObject(data)) return undefined;
  const sections: Record<string, z.ZodType> = schema.in.shape;
  if (Object.keys(data).some((key) => !Object.hasOwn(sections, key))) return undefined;
  const written: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    const result = (sections[key] as z.ZodType).safeParse(value, PARSE);
    if (!result.success) return undefined;
    written[key] = result.data;
  }
  const parsed = (key: string): unknown => (Object.hasOwn(written, key) ? written[key] : (sections[key] as z.ZodType).parse(undefined, PARSE));
  const dataDir = parsed('data_dir') as string;
  const config: Record<string, unknown> = {};
  for (const key of Object.keys(sections)) {
    const value = () => finish(key, parsed(key), dataDir, finishing);
    if (Object.hasOwn(written, key) || key === 'data_dir') defineKey(config, key, value());
    else defineOnFirstRead(config, key, value);
  }
  return config as HobConfig;
}

/** `key` computed when first read, then a plain value (as is a value assigned before). */
function defineOnFirstRead(target: Record<string, unknown>, key: string, compute: () => unknown): void {
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get() {
      const value = compute();
      defineKey(target, key, value);
      return value;
    },
    set(value: unknown) {
      defineKey(target, key, value);
    },
  });
}

/** Finds and loads the config (see resolveConfigPath); defaults when there is no file. */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const path = resolveConfigPath(options);
  const text = options.text ?? (path === undefined ? '' : readConfigText(path));
  return { config: parseConfig(text, { file: path, env, channels: options.channels }), path };
}

/**
 * The model API key, or a UserFacingError saying where to put one. Not part of loading:
 * `hob doctor` reports a missing key, commands that call the model require it.
 */
export function requireModelKey(config: HobConfig, configPath?: string): string {
  const key = config.model.api_key;
  if (key !== undefined && key !== '') return key;
  const variable = MODEL_KEY_ENV[config.model.provider];
  const file = configPath ?? '~/.hob/config.yaml';
  let message = `No model API key. Set ${variable} in the environment, or model.api_key in ${file}.`;
  if (config.model.provider === 'openai') {
    message += ' An OpenAI-compatible local server that needs no key accepts any placeholder, e.g. api_key: none.';
  }
  throw new UserFacingError(message);
}
