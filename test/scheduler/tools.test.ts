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
});
