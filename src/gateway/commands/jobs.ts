import { askerOf, changeJob, describeJob, personTimezone, visibleJobs, type JobAccess } from '../../scheduler/tools.js';
import type { Button, ButtonPress, ChannelAdapter, OutboundMessage } from '../channel.js';

/**
 * `/jobs`: the person's reminders and reports with their next run, and Pause / Resume /
 * Delete buttons (`job:<verb>:<id>`, well under the 64 bytes the smallest button data allows). Whoever presses must
 * own the job (or hob): anyone else is told it was not found.
 */
export function jobsMessage(access: JobAccess, platform: string, userId: string, note?: string, inGroup = true): OutboundMessage {
  const asker = askerOf(access, platform, userId);
  // In a group everyone reads the answer: an owner of hob sees only their own jobs there.
  const jobs = visibleJobs(access, inGroup ? { ...asker, owner: false } : asker);
  const zone = personTimezone(access, asker.personId);
  const head = note ? `${note}\n\n` : '';
  if (!jobs.length) return { text: `${head}No reminders or reports. Ask me in plain words, e.g. "remind me at 9 to call the dentist".`, plain: true };
  // `:a` marks a list that shows everyone's jobs (an owner's, in a DM), so a redraw keeps that scope.
  const scope = asker.owner && !inGroup ? ':a' : '';
  const buttons: Button[][] = jobs.slice(0, 20).map((job) => [
    job.enabled ? { label: `Pause ${job.id}`, data: `job:pause:${job.id}${scope}` } : { label: `Resume ${job.id}`, data: `job:resume:${job.id}${scope}` },
    { label: `Delete ${job.id}`, data: `job:delete:${job.id}${scope}` },
  ]);
  const more = jobs.length > 20 ? `\n(${jobs.length - 20} more; hob jobs list shows them all)` : '';
  return { text: `${head}Your reminders and reports (times in ${zone}):\n${jobs.map((job) => describeJob(job, zone, asker.personId)).join('\n')}${more}`, plain: true, buttons };
}

/** Handles a `job:` button; false when the press is not one. */
export async function handleJobPress(press: ButtonPress, adapter: ChannelAdapter, access: JobAccess): Promise<boolean> {
  const match = /^job:(pause|resume|delete):(j[0-9a-f]{8})(:a)?$/.exec(press.data);
  if (!match) return false;
  const verb = match[1] as 'pause' | 'resume' | 'delete';
  const asker = askerOf(access, press.platform, press.userId);
  const outcome = changeJob(access, asker, verb, match[2] as string);
  await press.answer(outcome.length > 190 ? `${outcome.slice(0, 189)}…` : outcome);
  if (outcome.startsWith('No job')) return true;
  // Redrawn for whoever pressed, with the scope the list had (everyone's only where it showed them).
  await adapter.edit(press.messageRef, jobsMessage(access, press.platform, press.userId, outcome, match[3] !== ':a')).catch(() => undefined);
  return true;
}
