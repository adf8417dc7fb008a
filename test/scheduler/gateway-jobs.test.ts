import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { createScheduling, drainer, type Scheduling } from '../../src/scheduler/index.js';
import type { Scheduler } from '../../src/scheduler/runner.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { SETTINGS, silent } from './harness.js';

let hob: TestGateway | undefined;
let scheduler: Scheduler | undefined;

afterEach(async () => {
  await scheduler?.stop();
  await hob?.close();
  hob = undefined;
  scheduler = undefined;
});

/** A gateway over the in-memory platform whose model has the schedule tools, and the scheduler on the same file. */
async function start(model: ScriptedModel): Promise<{ channel: MemoryChannel; scheduling: Scheduling }> {
  const channel = new MemoryChannel();
  const dir = (await import('../support/engine.js')).tempDir('hob-gwjobs-');
  const { openSqliteStore } = await import('../../src/store/sqlite/store.js');
  const store = openSqliteStore(`${dir}/hob.db`, { clock: systemClock });
  const scheduling = createScheduling({ store, clock: systemClock, defaultTimezone: 'Europe/Berlin', settings: SETTINGS });
  scheduling.setOwnerCheck((_platform, userId) => userId === OWNER.id);
  hob = await startTestGateway(channel, model, { dir, tools: scheduling.tools, jobs: scheduling.access });
  return { channel, scheduling };
}

describe('jobs through the gateway', () => {
  it('a reminder due while its chat is busy with a long run arrives on time, not behind the run', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'schedule_create', input: { kind: 'reminder', text: 'check the oven', in: '10m' } }] },
      { text: 'I will remind you.' },
      { hang: true, text: 'Thinking very hard…' },
    ]);
    const { channel, scheduling } = await start(model);
    const chat = () => channel.chat(`dm-${OWNER.id}`);
    channel.say(OWNER, 'remind me in 10 minutes to check the oven');
    await channel.waitFor(() => chat().find((m) => m.text === 'I will remind you.'), 5000, 'the confirmation');
    expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toMatch(/Created reminder j[0-9a-f]{8}: once at .*Next run \(Europe\/Berlin\)/);
    channel.say(OWNER, 'now write me a long essay');
    await channel.waitFor(() => model.requests.length === 3, 5000, 'the long run');
    // Ten minutes pass (the job is moved to now) while the run still thinks.
    const [job] = scheduling.jobs.list();
    if (!job) throw new Error('no job');
    scheduling.jobs.save({ ...job, nextRunAt: Date.now() }, Date.now());
    scheduler = scheduling.startRunner({ kick: drainer((hob as TestGateway).gateway.delivery, (hob as TestGateway).store.outbox), engine: () => { throw new Error('no reports here'); }, logger: silent, intervalMs: 50 });
    await channel.waitFor(() => chat().find((m) => m.text === '⏰ check the oven'), 5000, 'the reminder');
    expect(hob?.gateway.pool.all().some((conversation) => conversation.engine.isRunning)).toBe(true);
    channel.say(OWNER, '/stop');
  });

  it('/jobs lists the person\'s jobs with buttons; only the owner of a job may pause or delete it', async () => {
    const { channel, scheduling } = await start(new ScriptedModel());
    const ctx = { sessionKey: `memory:dm-${FRIEND.id}`, userId: FRIEND.id };
    const create = scheduling.tools.find((tool) => tool.name === 'schedule_create');
    const { makeContext } = await import('../tools/tool-harness.js');
    await create?.run({ kind: 'reminder', text: "Bob's dentist", cron: '0 9 * * 1' }, { ...makeContext('/tmp'), ...ctx });
    const [job] = scheduling.jobs.list();
    channel.say(FRIEND, '/jobs');
    const list = await channel.waitFor(() => channel.chat(`dm-${FRIEND.id}`).find((m) => m.text.startsWith('Your reminders and reports')), 5000, 'the list');
    expect(list.text).toMatch(new RegExp(`${job?.id} · reminder · cron "0 9 \\* \\* 1" \\(Europe/Berlin\\) · next Mon \\d+ \\w{3} \\d{4} 09:00\n  "Bob's dentist"`));
    expect(list.buttons.map((b) => b.label)).toEqual([`Pause ${job?.id}`, `Delete ${job?.id}`]);

    // Someone else (not an owner of hob) pressing Bob's buttons: not found, nothing changes.
    const STRANGER = { id: '300', name: 'Eve' };
    channel.press(STRANGER, list, `Delete ${job?.id}`);
    await channel.waitFor(() => channel.answers.find((a) => a.userId === STRANGER.id), 5000, "Eve's notice");
    expect(channel.answers.find((a) => a.userId === STRANGER.id)?.text).toBe(`No job ${job?.id} found.`);
    expect(scheduling.jobs.get(job?.id ?? '')).toBeDefined();

    channel.press(FRIEND, list, `Pause ${job?.id}`);
    await channel.waitFor(() => list.text.startsWith(`Paused ${job?.id}`), 5000, 'the edited list');
    expect(scheduling.jobs.get(job?.id ?? '')?.enabled).toBe(false);
    expect(list.buttons.map((b) => b.label)).toEqual([`Resume ${job?.id}`, `Delete ${job?.id}`]);
    channel.press(FRIEND, list, `Delete ${job?.id}`);
    await channel.waitFor(() => list.text.startsWith(`Deleted reminder ${job?.id}`), 5000, 'the deletion');
    expect(scheduling.jobs.list()).toEqual([]);
  });

  it("an owner's /jobs shows everyone's jobs in their DM, and only their own in a group", async () => {
    const { channel, scheduling } = await start(new ScriptedModel());
    const { makeContext } = await import('../tools/tool-harness.js');
    const create = scheduling.tools.find((tool) => tool.name === 'schedule_create');
    await create?.run({ kind: 'reminder', text: "Bob's secret appointment", in: '2h' }, { ...makeContext('/tmp'), sessionKey: `memory:dm-${FRIEND.id}`, userId: FRIEND.id });
    await create?.run({ kind: 'reminder', text: "Ann's errand", in: '1h' }, { ...makeContext('/tmp'), sessionKey: `memory:dm-${OWNER.id}`, userId: OWNER.id });
    channel.say(OWNER, '/jobs');
    const dm = await channel.waitFor(() => channel.chat(`dm-${OWNER.id}`).find((m) => m.text.startsWith('Your reminders')), 5000, 'the DM list');
    expect(dm.text).toContain("Bob's secret appointment");
    expect(dm.text).toContain(' · of memory:200');
    channel.say(OWNER, '/jobs', { chatId: 'group-1', chatType: 'group', mention: true });
    const group = await channel.waitFor(() => channel.chat('group-1').find((m) => m.text.startsWith('Your reminders')), 5000, 'the group list');
    expect(group.text).toContain("Ann's errand");
    expect(group.text).not.toContain('Bob');
  });
});
