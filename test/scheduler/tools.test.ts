import { describe, expect, it } from 'vitest';
import { harness, jobIdIn } from './harness.js';

const ANN = { userId: '100' };
const BOB = { userId: '200' };
const CAROL = { userId: '300' };

describe('schedule tools', () => {
  it('answer with the id and the next three runs in the person\'s own timezone', async () => {
    const h = harness({ timezoneFor: (person) => (person === 'memory:200' ? 'America/New_York' : undefined) });
    const bob = await h.call('schedule_create', { kind: 'reminder', text: 'gym', cron: '0 7 * * *' }, BOB);
    expect(bob.content).toMatch(/^Created reminder j[0-9a-f]{8}: cron "0 7 \* \* \*" \(America\/New_York\)\.\nNext runs \(America\/New_York\): Tue 1 Dec 2026 07:00; Wed 2 Dec 2026 07:00; Thu 3 Dec 2026 07:00$/);
    const ann = await h.call('schedule_create', { kind: 'reminder', text: 'call mum', cron: '0 7 * * *', timezone: 'america/new_york' }, ANN);
    expect(ann.content).toContain('(America/New_York).\nNext runs (Europe/Berlin): Tue 1 Dec 2026 13:00; Wed 2 Dec 2026 13:00; Thu 3 Dec 2026 13:00');
  });

  it.each([
    [{ kind: 'reminder', text: 'x', in: '20m', timezone: 'Europe/Berln' }, 'Unknown timezone "Europe/Berln". Use an IANA name like Europe/Berlin, America/New_York or UTC.'],
    [{ kind: 'reminder', text: 'x', at: '2026-12-01T10:30' }, 'at "2026-12-01T10:30" is in the past (it is now 2026-12-01 11:00 in Europe/Berlin). Give a future time.'],
    [{ kind: 'reminder', text: 'x', cron: '0 25 * * *' }, 'cron "0 25 * * *" is not valid (hour:'],
    [{ kind: 'reminder', text: 'x' }, 'No time given'],
    [{ kind: 'reminder', text: 'x', every: '10s' }, 'every "10s" is shorter than one minute; the shortest interval is 1m.'],
  ])('rejects %j', async (input, message) => {
    const h = harness();
    const answer = await h.call('schedule_create', input);
    expect(answer.isError).toBe(true);
    expect(answer.content).toContain(message);
    expect(h.scheduling.jobs.list()).toEqual([]);
  });

  it('update retimes, pauses and resumes a job; delete removes it', async () => {
    const h = harness();
    const id = jobIdIn((await h.call('schedule_create', { kind: 'reminder', text: 'tea', in: '1h' })).content);
    expect((await h.call('schedule_update', { id, every: '2h', text: 'green tea' })).content).toContain('Next runs (Europe/Berlin): Tue 1 Dec 2026 13:00; Tue 1 Dec 2026 15:00; Tue 1 Dec 2026 17:00');
    expect((await h.call('schedule_update', { id, enabled: false })).content).toContain('paused');
    expect((await h.call('schedule_list', {})).content).toContain(`${id} · reminder · every 2h · paused`);
    expect((await h.call('schedule_update', { id, enabled: true })).content).toContain('Next runs');
    expect((await h.call('schedule_delete', { id })).content).toBe(`Deleted reminder ${id} ("green tea").`);
    expect(h.scheduling.jobs.get(id)).toBeUndefined();
  });

  it("someone else cannot see, change, pause or delete a person's job; its id is not found", async () => {
    const h = harness();
    const id = jobIdIn((await h.call('schedule_create', { kind: 'reminder', text: 'Bob private thing', in: '1h' }, BOB)).content);
    expect((await h.call('schedule_list', {}, CAROL)).content).toBe('No reminders or reports.');
    for (const [tool, input] of [
      ['schedule_update', { id, enabled: false }],
      ['schedule_update', { id, text: 'hijacked' }],
      ['schedule_delete', { id }],
    ] as const) {
      const answer = await h.call(tool, input, CAROL);
      expect(answer).toEqual({ content: `No job ${id} found. schedule_list shows the ids.`, isError: true });
    }
    expect(h.scheduling.jobs.get(id)).toMatchObject({ enabled: true, text: 'Bob private thing' });
    // An owner of hob (Ann) may change anyone's job; her list in a chat (maybe a group) shows her own.
    expect((await h.call('schedule_list', {}, ANN)).content).toBe('No reminders or reports.');
    expect((await h.call('schedule_update', { id, enabled: false }, ANN)).content).toContain('paused');
  });

  it('refuses a job past scheduler.max_jobs_per_person with the reason, per person; a fired one-shot or a deleted job frees a place', async () => {
    const h = harness();
    for (let n = 1; n <= 50; n++) expect((await h.call('schedule_create', { kind: 'reminder', text: `stretch ${n}`, in: `${n}m` }, BOB)).isError).toBe(false);
    const refused = await h.call('schedule_create', { kind: 'reminder', text: 'one too many', in: '2h' }, BOB);
    expect(refused).toEqual({
      content: 'Not created: this person already has 50 reminders and reports that can still run, the most one person may have (scheduler.max_jobs_per_person is 50). Delete ones they no longer need (schedule_list shows them, schedule_delete removes one), then try again.',
      isError: true,
    });
    expect(h.scheduling.jobs.list('memory:200')).toHaveLength(50);
    // Someone else is not held back by Bob's jobs.
    expect((await h.call('schedule_create', { kind: 'reminder', text: 'water plants', in: '1h' }, CAROL)).isError).toBe(false);
    // The first reminder fires (a one-shot, now done): Bob has room for one more.
    h.clock.advance(61_000);
    await h.tick();
    expect((await h.call('schedule_create', { kind: 'reminder', text: 'room again', in: '2h' }, BOB)).isError).toBe(false);
    expect((await h.call('schedule_create', { kind: 'reminder', text: 'full again', in: '2h' }, BOB)).isError).toBe(true);
    const some = h.scheduling.jobs.list('memory:200').find((job) => job.nextRunAt !== undefined);
    await h.call('schedule_delete', { id: some?.id }, BOB);
    expect((await h.call('schedule_create', { kind: 'reminder', text: 'after a delete', in: '2h' }, BOB)).isError).toBe(false);
  });

  it('the cap follows the config', async () => {
    const h = harness({ maxJobsPerPerson: 2 });
    await h.call('schedule_create', { kind: 'reminder', text: 'a', in: '1h' });
    await h.call('schedule_create', { kind: 'reminder', text: 'b', in: '1h' });
    expect((await h.call('schedule_create', { kind: 'reminder', text: 'c', in: '1h' })).content).toContain('scheduler.max_jobs_per_person is 2');
  });

  it('schedule_list answers in pages of 20 and says how to get the next', async () => {
    const h = harness();
    for (let n = 1; n <= 45; n++) await h.call('schedule_create', { kind: 'reminder', text: `task number ${n} with a fairly long description to read`, in: `${n}h` }, BOB);
    const first = (await h.call('schedule_list', {}, BOB)).content;
    expect(first.split('\n')[0]).toBe('Times in Europe/Berlin (page 1 of 3: jobs 1–20 of 45):');
    expect(first).toContain('task number 1 with');
    expect(first).toContain('task number 20 with');
    expect(first).not.toContain('task number 21 with');
    expect(first.split('\n').at(-1)).toBe('More: schedule_list with page 2.');
    expect(first.length).toBeLessThan(4000);
    const last = (await h.call('schedule_list', { page: 3 }, BOB)).content;
    expect(last.split('\n')[0]).toBe('Times in Europe/Berlin (page 3 of 3: jobs 41–45 of 45):');
    expect(last).toContain('task number 45 with');
    expect(last).not.toContain('More:');
    // Past the end: the last page.
    expect((await h.call('schedule_list', { page: 9 }, BOB)).content).toBe(last);
  });
});
