import '../support/env.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect, tempDir } from '../support/engine.js';

let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('compaction hooks in hob', () => {
  it('pre_compact and post_compact added to the config file while hob runs fire on the next compaction', async () => {
    const dir = tempDir('hob-compact-hooks-');
    const path = join(dir, 'config.yaml');
    const base = `data_dir: ${dir}/data\nmodel: { api_key: test }\n`;
    writeFileSync(path, base);
    const model = new ScriptedModel([{ text: `One. ${'a '.repeat(400)}` }, { text: `Two. ${'b '.repeat(400)}` }, { text: '<summary>They said first and second.</summary>' }]);
    app = await createApp({ config: parseHobConfig(base, { env: {} }), configPath: path, channel: 'a test', provider: model, logDestination: 'silent' });
    // The conversation exists before the hooks do: it must use the reloaded ones.
    const engine = app.engine('console:ann');
    const as = { userId: 'ann', interaction: answering(), signal: new AbortController().signal };
    await collect(engine.submit('first', as));
    await collect(engine.submit('second', as));

    writeFileSync(
      path,
      `${base}hooks:\n  pre_compact:\n    - { type: command, command: "cat > ${dir}/pre.json" }\n  post_compact:\n    - { type: command, command: "cat > ${dir}/post.json" }\n`,
    );
    expect(app.hooks.reload()).toBe(true);
    expect(await engine.compactNow('ann')).toMatch(/^Compacted the conversation \(level 4\)/);
    expect(JSON.parse(readFileSync(join(dir, 'pre.json'), 'utf8'))).toMatchObject({ session_key: 'console:ann', trigger: 'manual' });
    expect(existsSync(join(dir, 'post.json'))).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'post.json'), 'utf8'))).toMatchObject({ session_key: 'console:ann' });
  });
});
