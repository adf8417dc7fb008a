import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { personaPath } from '../../src/memory/persona.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect, tempDir } from '../support/engine.js';

/** What the model is told about the person: profile, local time, snapshot, persona. */

let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(extra = '', now = () => Date.UTC(2026, 11, 1, 9, 5)) {
  const dir = tempDir('hob-prompt-');
  const model = new ScriptedModel();
  const config = parseHobConfig(`data_dir: ${dir}\ntimezone: UTC\nmodel: { api_key: test }\n${extra}`, { env: {} });
  app = await createApp({ config, channel: 'a test', provider: model, logDestination: 'silent', clock: { now } });
  return { app, model, dir };
}

const ask = (userId: string, chatType?: 'dm' | 'group') => ({ userId, interaction: answering(), signal: new AbortController().signal, chatType });

describe('memory in the system prompt', () => {
  it("uses the person's name, language, style and local time", async () => {
    const { app, model } = await start();
    const person = app.memory.personFor('telegram:42', '42');
    app.memory.profiles.set(person, 'name', 'Annie');
    app.memory.profiles.set(person, 'language', 'Italian');
    app.memory.profiles.set(person, 'style', 'short answers, no emoji');
    app.memory.profiles.set(person, 'timezone', 'asia/tokyo');
    await collect(app.engine('telegram:42').submit('hello', ask('42')));

    const system = model.requests[0]?.system ?? '';
    expect(system).toContain('Call the person Annie.');
    expect(system).toContain('Answer in Italian');
    expect(system).toContain('short answers, no emoji');
    // 09:05 UTC is 18:05 in Tokyo; the message is stamped in the person's time too.
    expect(system).toContain('Their timezone is Asia/Tokyo; at the start of this session their local time was 18:05 on Tuesday, 1 December 2026.');
    expect(model.requests[0]?.messages[0]?.content[0]).toEqual({ type: 'text', text: '[Tue, 1 Dec 2026, 18:05]' });
    // Another person, no profile: hob's default timezone.
    await collect(app.engine('telegram:43').submit('hello', ask('43')));
    expect(model.requests[1]?.system).toContain('Their timezone is UTC');
    expect(model.requests[1]?.system).not.toContain('Annie');
  });

  it('puts a snapshot of the most used and most recent entries within memory.snapshot_chars', async () => {
    const { app, model } = await start('memory: { snapshot_chars: 400 }\n');
    const person = 'telegram:42';
    for (let n = 1; n <= 30; n++) app.memory.save(person, { content: `Fact number ${n} about the garden shed and its tools`, source: 'tool' });
    const used = app.memory.save(person, { content: 'The router admin password is in the blue folder', source: 'tool' });
    for (let n = 30; n <= 32; n++) app.memory.save(person, { content: `Late fact ${n} on the kitchen renovation`, source: 'tool' });
    await app.memory.search(person, 'router admin password', 1);

    expect(app.memory.snapshot(person).length).toBeLessThanOrEqual(400);
    await collect(app.engine('telegram:42').submit('hi', ask('42')));
    const system = model.requests[0]?.system ?? '';
    expect(system).toContain(`[${used.entry.id}] The router admin password is in the blue folder`);
    expect(system).toContain('Late fact 32 on the kitchen renovation');
    expect(system).not.toContain('Fact number 1 about');
  });

  it('keeps the snapshot for the session (prompt cache) and shows new memory after /new', async () => {
    const { app, model } = await start();
    const engine = app.engine('telegram:42');
    await collect(engine.submit('hi', ask('42')));
    app.memory.save('telegram:42', { content: 'Padel with Jonas every Thursday', source: 'tool' });
    await collect(engine.submit('and now?', ask('42')));
    expect(model.requests[1]?.system).toBe(model.requests[0]?.system);
    engine.reset();
    await collect(engine.submit('new session', ask('42')));
    expect(model.requests[2]?.system).toContain('Padel with Jonas every Thursday');
  });

  it('writes a default persona on first start and reads an edit at the next session, without a restart', async () => {
    const { app, model, dir } = await start();
    const engine = app.engine('console:ann');
    await collect(engine.submit('hi', ask('ann')));
    expect(model.requests[0]?.system).toContain('Your name is hob.');
    writeFileSync(personaPath(dir), '# Persona\n\nYour name is Jarvis. You speak like a butler.\n');
    // The owner's edit comes from outside, in a later turn of the event loop than the file was
    // last looked at in (hob looks once per turn; this test's model answers within one).
    await new Promise((resolve) => setImmediate(resolve));
    await collect(engine.submit('still there?', ask('ann')));
    expect(model.requests[1]?.system).toContain('Your name is hob.');
    engine.reset();
    await collect(engine.submit('hello again', ask('ann')));
    expect(model.requests[2]?.system).toContain('Your name is Jarvis. You speak like a butler.');
    expect(model.requests[2]?.system).not.toContain('Your name is hob.');
    expect(join(dir, 'persona.md')).toBe(personaPath(dir));
  });

  it('injects no personal snapshot in a shared group conversation', async () => {
    const { app, model } = await start('gateway: { group_sessions: shared }\n');
    app.memory.save('telegram:42', { content: 'My salary is 5000 a month', source: 'tool' });
    app.memory.profiles.set('telegram:42', 'name', 'Annie');
    await collect(app.engine('telegram:-100').submit('hi all', ask('42', 'group')));
    const system = model.requests[0]?.system ?? '';
    expect(system).not.toContain('salary');
    expect(system).not.toContain('Annie');
    expect(system).toContain('shared group conversation');
    await collect(app.engine('telegram:42').submit('hi', ask('42', 'dm')));
    expect(model.requests[1]?.system).toContain('My salary is 5000 a month');
  });

  it('injects no personal snapshot in a thread everyone shares (Discord, Slack), whatever group_sessions says', async () => {
    const { app, model } = await start();
    app.memory.save('discord:42', { content: 'My salary is 5000 a month', source: 'tool' });
    await collect(app.engine('discord:500:600').submit('hi thread', ask('42', 'group')));
    expect(model.requests[0]?.system ?? '').not.toContain('salary');
    expect(model.requests[0]?.system).toContain('shared group conversation');
    // Ann's own conversation in a server channel (per person) still carries her memory.
    await collect(app.engine('discord:500:u42').submit('hi', ask('42', 'group')));
    expect(model.requests[1]?.system).toContain('My salary is 5000 a month');
  });
});
