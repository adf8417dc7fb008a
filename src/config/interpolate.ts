/**
 * ${VAR} interpolation over the parsed YAML, before validation. Only string values are
 * touched (never keys), so a value can never change the shape of the config.
 */

export type ConfigPath = readonly (string | number)[];
export type PathProblem = { path: ConfigPath; message: string };

/** Keys where an unset variable means "not set" instead of an error. */
const OPTIONAL_REFERENCE_PATHS = ['model.api_key', 'voice.api_key', 'voice.tts.api_key'];

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// "$${" is an escaped "${"; "${...}" is a reference; a lone "${" is unterminated.
const TOKEN = /\$\$\{|\$\{([^}]*)\}|\$\{/g;

class UnsetVariable {
  constructor(readonly name: string) {}
}

/** The interpolated text, the first unset variable, or what is wrong with the references. */
function interpolateString(text: string, env: NodeJS.ProcessEnv): string | UnsetVariable | string[] {
  const problems: string[] = [];
  let unset: UnsetVariable | undefined;
  const result = text.replace(TOKEN, (token, body: string | undefined) => {
    if (token === '$${') return '${';
    if (body === undefined) {
      problems.push('"${" without a closing "}"; write "$${" for a literal "${"');
      return token;
    }
    const separator = body.indexOf(':-');
    const name = separator === -1 ? body : body.slice(0, separator);
    if (!NAME.test(name)) {
      problems.push(`"\${${body}}" is not a valid environment variable reference; write "$\${" for a literal "\${"`);
      return token;
    }
    const value = env[name];
    // Shell semantics: ":-" also covers a variable that is set but empty.
    if (separator !== -1) return value === undefined || value === '' ? body.slice(separator + 2) : value;
    if (value === undefined) {
      unset ??= new UnsetVariable(name);
      return '';
    }
    return value;
  });
  if (problems.length > 0) return problems;
  return unset ?? result;
}

export function formatPath(path: ConfigPath): string {
  let text = '';
  for (const segment of path) {
    text += typeof segment === 'number' ? `[${segment}]` : text === '' ? segment : `.${segment}`;
  }
  return text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Returns a copy of `data` with references replaced, plus one problem per bad string.
 * An unset variable at an optional-reference key removes that key.
 */
export function interpolateEnv(
  data: unknown,
  env: NodeJS.ProcessEnv,
): { value: unknown; problems: PathProblem[] } {
  const problems: PathProblem[] = [];
  const REMOVE = Symbol('remove');

  const visit = (value: unknown, path: ConfigPath): unknown => {
    if (typeof value === 'string') {
      const result = interpolateString(value, env);
      if (typeof result === 'string') return result;
      if (result instanceof UnsetVariable) {
        if (OPTIONAL_REFERENCE_PATHS.includes(formatPath(path))) return REMOVE;
        problems.push({ path, message: `environment variable ${result.name} is not set` });
      } else {
        for (const message of result) problems.push({ path, message });
      }
      return value;
    }
    if (Array.isArray(value)) return value.map((item, index) => visit(item, [...path, index]));
    if (isPlainObject(value)) {
      const copy: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        const next = visit(item, [...path, key]);
        // defineProperty: a YAML key named "__proto__" must stay an ordinary (unknown) key.
        if (next !== REMOVE) {
          Object.defineProperty(copy, key, { value: next, enumerable: true, writable: true, configurable: true });
        }
      }
      return copy;
    }
    return value;
  };

  return { value: visit(data, []), problems };
}
