import type { HobConfig } from '../config/schema.js';
import { systemClock } from '../core/clock.js';
import { UserFacingError } from '../core/errors.js';
import { createScheduling } from '../scheduler/index.js';
import { changeJob, describeJob, personTimezone, type Asker } from '../scheduler/tools.js';
import { openStore } from '../store/open.js';
import { PeopleStore } from '../memory/people.js';
import { ProfileStore } from '../memory/profile.js';
import { consoleUserId } from './console-identity.js';

/**
 * `hob jobs list | pause ID | resume ID | delete ID` — on the store directly, so it also
 * works while `hob start` runs (the runner reads each job as it claims it). The terminal's
 * person owns hob and sees everyone's jobs.
 */
/** Returns the exit code: 1 when the job was not found. */
export function runJobs(config: HobConfig, verb: string, id: string | undefined, out: NodeJS.WritableStream = process.stdout): number {
  const store = openStore({ dataDir: config.data_dir, store: config.store }, { clock: systemClock });
  try {
    // The terminal's person may be linked to a chat identity: times in that person's profile timezone.
    const people = new PeopleStore(store.people, systemClock);
    const profiles = new ProfileStore(store.profiles, systemClock);
    const scheduling = createScheduling({
      store,
      clock: systemClock,
      defaultTimezone: config.timezone,
      settings: { graceMinutes: config.scheduler.grace_minutes, maxFailures: config.scheduler.max_failures, reportTimeoutSeconds: config.scheduler.report_timeout_seconds },
      people,
      timezoneFor: (personId) => profiles.get(personId).timezone,
    });
    const { access } = scheduling;
    const asker: Asker = { personId: people.personId('console', consoleUserId()), owner: true, platform: 'console', userId: consoleUserId() };
    switch (verb) {
      case 'list': {
        const jobs = scheduling.jobs.list();
        if (!jobs.length) {
          out.write('No reminders or reports.\n');
          return 0;
        }
        const zone = personTimezone(access, asker.personId);
        out.write(`Times in ${zone}:\n`);
        for (const job of jobs) out.write(`${describeJob(job, zone)}\n  owner ${job.ownerId}, delivers to ${job.target.platform}:${job.target.chatId}${job.target.threadId ? `:${job.target.threadId}` : ''}\n`);
        return 0;
      }
      case 'pause':
      case 'resume':
      case 'delete': {
        if (!id) throw new UserFacingError(`Usage: hob jobs ${verb} ID (hob jobs list shows the ids)`);
        const outcome = changeJob(access, asker, verb, id);
        out.write(`${outcome}\n`);
        return outcome.startsWith('No job') ? 1 : 0;
      }
      default:
        throw new UserFacingError(`Unknown jobs command "${verb}". Use: hob jobs list | pause ID | resume ID | delete ID`);
    }
  } finally {
    store.close();
  }
}
