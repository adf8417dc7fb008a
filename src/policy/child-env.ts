/**
 * The environment of every process hob starts (bash, hooks): hob's own, minus anything
 * that carries a credential, so `env`, `printenv` or a hook cannot print hob's tokens.
 * hob's own /proc/<pid>/environ still holds what it was started with: the path checks
 * refuse it and the sandbox hides hob's process altogether.
 */

/** Names of variables that carry credentials. */
const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|CREDENTIALS|AUTH|COOKIE)|^(ANTHROPIC|OPENAI|TELEGRAM|SLACK|DISCORD|HOB|AWS|AZURE|GOOGLE|GH|GITHUB|GITLAB|NPM|PYPI|CARGO|DOCKER|VAULT)_/i;

export function withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !SECRET_NAME.test(name)));
}
