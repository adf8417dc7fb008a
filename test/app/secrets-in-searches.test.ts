import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect, tempDir } from '../support/engine.js';

/**
 * grep and glob are read-only, so default mode runs them without asking, on whatever
 * directory the model names. Walking from the home directory must still never show a key.
 */

let app: App | undefined;
const savedHome = process.env.HOME;
afterEach(async () => {
  await app?.close();
  app = undefined;
  process.env.HOME = savedHome;
});

async function homeWithSecrets(model: ScriptedModel) {
  const root = tempDir('hob-secrets-');
  const home = join(root, 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  mkdirSync(join(home, '.aws'), { recursive: true });
  mkdirSync(join(home, 'notes'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY----- token=abc\n');
  writeFileSync(join(home, '.aws', 'credentials'), 'aws_secret_access_key = token=xyz\n');
  writeFileSync(join(home, 'notes', 'todo.txt'), 'rotate the token=soon\n');
  process.env.HOME = home; // what os.homedir() reads, so the checker protects this home
  const dataDir = join(home, '.hob');
  const config = parseHobConfig(`data_dir: ${dataDir}\nmodel: { api_key: test }\n`, { env: {} });
  app = await createApp({ config, channel: 'a test', provider: model, logDestination: 'silent' });
  writeFileSync(join(dataDir, 'config.yaml'), 'model: { api_key: sk-ant-secret token=cfg }\n');
  return { home, app };
}

const lastToolResult = (model: ScriptedModel) => JSON.stringify(model.requests.at(-1)?.messages.at(-1));

describe('searches never show secrets', () => {
  it('grep from the home directory finds ordinary files and skips keys, credentials and hob\'s config', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'grep', input: { pattern: 'token=', path: '~' } }] }, { text: 'found one' }]);
    const { app } = await homeWithSecrets(model);
    const events = await collect(app.engine('console:local').submit('find tokens', { userId: 'u', interaction: answering(), signal: new AbortController().signal }));
    expect(events.some((event) => event.type === 'approval_requested')).toBe(false); // read-only: no question asked
    const result = lastToolResult(model);
    expect(result).toContain('notes/todo.txt:1: rotate the token=soon');
    expect(result).not.toContain('PRIVATE KEY');
    expect(result).not.toContain('aws_secret_access_key');
    expect(result).not.toContain('sk-ant-secret');
    expect(result).toContain('hold secrets');
  });

  it('glob from the home directory does not list secret files, even by name', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'glob', input: { pattern: '**/*', path: '~' } }] }, { text: 'listed' }]);
    const { app } = await homeWithSecrets(model);
    await collect(app.engine('console:local').submit('list my files', { userId: 'u', interaction: answering(), signal: new AbortController().signal }));
    const result = lastToolResult(model);
    expect(result).toContain('notes/todo.txt');
    expect(result).not.toContain('id_rsa');
    expect(result).not.toContain('credentials');
    expect(result).not.toContain('config.yaml');
    expect(result).not.toContain('hob.db');
  });

  it('glob through a link in the workspace that points at ~/.aws lists nothing from it', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'glob', input: { pattern: 'awslink/*' } }] }, { text: 'nothing there' }]);
    const { home, app } = await homeWithSecrets(model);
    symlinkSync(join(home, '.aws'), join(app.config.tools.workspace, 'awslink'));
    await collect(app.engine('console:local').submit('what is in awslink?', { userId: 'u', interaction: answering(), signal: new AbortController().signal }));
    const result = lastToolResult(model);
    expect(result).not.toContain('credentials');
    expect(result).toContain('left out');
  });
});
