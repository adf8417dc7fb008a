/**
 * The environment of every process hob starts (bash, hooks): hob's own, minus anything
 * that carries a credential, so `env`, `printenv` or a hook cannot print hob's tokens.
 * hob's own /proc/<pid>/environ still holds what it was started with: the path checks
 * refuse it and the sandbox hides hob's process altogether.
 */

/** Names of variables that carry credentials, and the prefixes of services hob or its tools talk to. */
const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|CREDENTIALS|AUTH|COOKIE)|^(ANTHROPIC|OPENAI|HOB|AWS|AZURE|GOOGLE|GH|GITHUB|GITLAB|NPM|PYPI|CARGO|DOCKER|VAULT)_/i;

/**
 * `env` without its secrets. `secretEnv` adds names given by the chat channels (each channel
 * module's `secretEnv`): an exact name, or a prefix ending in `*` (`CHAT_*`), case-insensitive.
 */
export function withoutSecrets(env: NodeJS.ProcessEnv, secretEnv: readonly string[] = []): NodeJS.ProcessEnv {
  const extra = secretEnv.map((pattern) => pattern.toUpperCase());
  const isChannelSecret = (name: string) => extra.some((pattern) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern));
  return Object.fromEntries(Object.entries(env).filter(([name]) => !SECRET_NAME.test(name) && !isChannelSecret(name.toUpperCase())));
}
