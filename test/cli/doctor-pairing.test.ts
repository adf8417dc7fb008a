import '../support/env.js';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor.js';
import { runPairing } from '../../src/cli/pairing.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { SqliteOutbox } from '../../src/store/sqlite/outbox.js';
import { SqlitePairings } from '../../src/store/sqlite/pairings.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { tempDir } from '../support/engine.js';

let anthropic: FakeAnthropic | undefined;
let telegram: FakeTelegram | undefined;
afterEach(async () => {
  await anthropic?.close();
  await telegram?.close();
});

function capture(): { stream: Writable; text(): string } {
  let text = '';
  const stream = new Writable({ write: (chunk, _encoding, done) => ((text += String(chunk)), done()) });
  return { stream, text: () => text };
}

describe('hob doctor', () => {
  it('reports a working Telegram token by bot name and a missing model key by variable', async () => {
    telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
    const config = parseHobConfig(`channels:\n  telegram: { token: "${telegram.token}", api_root: ${telegram.apiRoot} }\n`, { env: {} });
    const checks = await runDoctor(config, undefined);
    expect(checks.find((c) => c.name === 'telegram')).toMatchObject({ ok: true, detail: expect.stringContaining('@hob_bot') });
    expect(checks.find((c) => c.name === 'model key')).toMatchObject({ ok: false, detail: 'not set: set ANTHROPIC_API_KEY or model.api_key' });
  });

  it('proves the model endpoint with one small request', async () => {
    anthropic = await startFakeAnthropic({ apiKey: 'the-right-key' });
    anthropic.push({ text: 'ok' });
    const config = parseHobConfig(`model: { api_key: the-right-key, name: claude-test, base_url: ${anthropic.baseUrl} }\n`, { env: {} });
    const [, model] = await runDoctor(config, undefined);
    expect(model).toMatchObject({ ok: true, detail: expect.stringContaining('(claude-test) answered') });
  });

  it('says when the model endpoint rejects the key, without printing the key', async () => {
    anthropic = await startFakeAnthropic({ apiKey: 'the-right-key' });
    const config = parseHobConfig(`model: { api_key: wrong-key-123456, base_url: ${anthropic.baseUrl} }\n`, { env: {} });
    const [, model] = await runDoctor(config, undefined);
    expect(model?.ok).toBe(false);
    expect(model?.detail).toContain('check model.api_key');
    expect(model?.detail).not.toContain('wrong-key-123456');
  });
});

describe('hob pairing', () => {
  it('lists a pending code, approves it, and queues a welcome for the running gateway', () => {
    const dir = tempDir();
    const config = parseHobConfig(`data_dir: ${dir}\n`, { env: {} });
    const db = openDatabase(join(dir, 'hob.db'));
    new SqlitePairings(db).insert({ code: 'ABCD2345', platform: 'telegram', userId: '300', userName: 'Eve', chatId: '300', createdAt: Date.now(), expiresAt: Date.now() + 60_000 });
    db.close();
    const listed = capture();
    runPairing(config, 'list', undefined, 'telegram', listed.stream);
    expect(listed.text()).toContain('ABCD2345  telegram  Eve (id 300)  pending');
    const approved = capture();
    runPairing(config, 'approve', 'abcd2345', 'telegram', approved.stream);
    expect(approved.text()).toBe('Approved Eve (id 300) on telegram.\n');
    const check = openDatabase(join(dir, 'hob.db'));
    expect(new SqlitePairings(check).isApproved('telegram', '300')).toBe(true);
    expect(new SqliteOutbox(check).counts().pending).toBe(1);
    check.close();
    expect(() => runPairing(config, 'approve', 'ZZZZ9999', 'telegram', capture().stream)).toThrow('No pairing request has the code ZZZZ9999');
  });
});
