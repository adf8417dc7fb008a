import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { canonicalTimezone } from '../../src/core/timezone.js';
import { runMemoryCommand } from '../../src/gateway/commands/memory.js';
import { jobsMessage } from '../../src/gateway/commands/jobs.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect, tempDir } from '../support/engine.js';

/**
 * A person's timezone is shown as they wrote it. Node's ICU still prefers the old names
 * (Asia/Calcutta, Asia/Katmandu, Europe/Kiev); hob never hands those back for the current ones.
 */

let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const ANN = { platform: 'telegram', userId: '42', private: true, buttons: false, trusted: true };
const ask = (userId: string) => ({ userId, interaction: answering('allow_once', 'allow_once'), signal: new AbortController().signal, chatType: 'dm' as const });

describe('timezone names as the person wrote them', () => {
  it.each([
    ['Asia/Kolkata', 'Asia/Kolkata'],
    ['Asia/Kathmandu', 'Asia/Kathmandu'],
    ['Europe/Kyiv', 'Europe/Kyiv'],
    ['asia/kolkata', 'Asia/Kolkata'],
    ['europe/berlin', 'Europe/Berlin'],
    // An alias is accepted as written, never swapped for the zone it points to.
    ['Asia/Calcutta', 'Asia/Calcutta'],
    ['US/Eastern', 'US/Eastern'],
    ['utc', 'UTC'],
  ])('%s is kept as %s', (given, kept) => {
    expect(canonicalTimezone(given)).toBe(kept);
  });

  it('refuses a name that is no timezone', () => {
    expect(canonicalTimezone('Asia/Kolkatta')).toBeUndefined();
    expect(canonicalTimezone('../etc/passwd')).toBeUndefined();
  });

  it('round-trips through /settings, profile_update, the system prompt and the job listing', async () => {
    const dir = tempDir('hob-tz-');
    const model = new ScriptedModel();
    const config = parseHobConfig(`data_dir: ${dir}\ntimezone: Europe/Kyiv\nmodel: { api_key: test }\n`, { env: {} });
    app = await createApp({ config, channel: 'a test', provider: model, logDestination: 'silent', clock: { now: () => Date.UTC(2026, 11, 1, 9, 5) } });
    expect(config.timezone).toBe('Europe/Kyiv');

    // /settings: what Ann typed is what she reads back, and what the prompt says.
    expect(runMemoryCommand(app.memory, 'settings', 'timezone Asia/Kathmandu', ANN).text).toBe('Your timezone is now Asia/Kathmandu.');
    expect(runMemoryCommand(app.memory, 'settings', '', ANN).text).toContain('timezone: Asia/Kathmandu');
    model.push({ text: 'Noted.' });
    await collect(app.engine('telegram:42').submit('hi', ask('42')));
    expect(model.requests[0]?.system).toContain('Their timezone is Asia/Kathmandu;');

    // profile_update from the model, then a reminder in her zone: the listing names it as she did.
    model.push(
      { toolCalls: [{ name: 'profile_update', input: { field: 'timezone', value: 'Asia/Kolkata' } }] },
      { toolCalls: [{ name: 'schedule_create', input: { kind: 'reminder', text: 'stand-up', cron: '0 9 * * 1-5' } }] },
      { text: 'Done.' },
    );
    app.engine('telegram:42').reset();
    await collect(app.engine('telegram:42').submit('I moved to Bangalore; remind me of the stand-up at 9 on weekdays', ask('42')));
    expect(runMemoryCommand(app.memory, 'settings', '', ANN).text).toContain('timezone: Asia/Kolkata');
    const created = JSON.stringify(model.requests.at(-1)?.messages.at(-1));
    expect(created).toContain('(Asia/Kolkata)');
    expect(created).not.toContain('Calcutta');
    expect(jobsMessage(app.scheduling.access, 'telegram', '42').text).toContain('(Asia/Kolkata)');
    app.engine('telegram:42').reset();
    model.push({ text: 'Hello again.' });
    await collect(app.engine('telegram:42').submit('hi', ask('42')));
    expect(model.requests.at(-1)?.system).toContain('Their timezone is Asia/Kolkata;');
    // Someone without a timezone of their own gets hob's default, spelled as configured.
    expect(runMemoryCommand(app.memory, 'settings', '', { ...ANN, userId: '43' }).text).toContain('timezone: Europe/Kyiv (default)');
  });
});
