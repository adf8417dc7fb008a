import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runJobs } from '../../src/cli/jobs.js';
import { loadHobConfig } from '../../src/app/channels.js';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { tempDir } from '../support/engine.js';
import { harness, jobIdIn } from './harness.js';

function terminal(): { out: PassThrough; text(): string } {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { out, text: () => text };
}

describe('hob jobs', () => {
  it('lists everyone\'s jobs with owner and target, and pauses, resumes and deletes by id', async () => {
    const dir = tempDir('hob-cli-jobs-');
    const { config } = loadHobConfig({ text: `data_dir: ${dir}\ntimezone: Europe/Berlin\n`, env: { HOME: dir } });
    const h = harness({ dir, start: new Date().toISOString() });
    const id = jobIdIn((await h.call('schedule_create', { kind: 'reminder', text: 'pay rent', cron: '0 9 1 * *' }, { userId: '200' })).content);
    h.db.close();

    const list = terminal();
    runJobs(config, 'list', undefined, list.out);
    expect(list.text()).toMatch(new RegExp(`^Times in Europe/Berlin:\\n${id} · reminder · cron "0 9 1 \\* \\*" \\(Europe/Berlin\\) · next \\w{3} 1 \\w{3} \\d{4} 09:00\\n  "pay rent"\\n  owner memory:200, delivers to memory:200\\n$`));

    const pause = terminal();
    runJobs(config, 'pause', id, pause.out);
    expect(pause.text()).toBe(`Paused ${id}. It will not run until resumed.\n`);
    const resume = terminal();
    runJobs(config, 'resume', id, resume.out);
    expect(resume.text()).toMatch(new RegExp(`^Resumed ${id}\\. Next runs \\(Europe/Berlin\\): `));
    const remove = terminal();
    runJobs(config, 'delete', id, remove.out);
    expect(remove.text()).toBe(`Deleted reminder ${id} ("pay rent").\n`);
    const missing = terminal();
    expect(runJobs(config, 'pause', id, missing.out)).toBe(1);
    expect(missing.text()).toBe(`No job ${id} found.\n`);
    const db = openDatabase(join(dir, 'hob.db'));
    expect(db.prepare('SELECT COUNT(*) n FROM jobs').get()).toEqual({ n: 0 });
    db.close();
  });
});
