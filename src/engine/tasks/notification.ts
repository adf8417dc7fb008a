/**
 * How a background task's end reaches its conversation: a `<task-notification>` block at the
 * start of the person's next message (the model's system prompt says these are hob's, not
 * the person's words), and a message in the chat through the outbox.
 */
import type { TaskRow } from '../../store/tasks.js';

/** The most of a task's result the notification carries; the whole of it is in task_output. */
const RESULT_CHARS = 2000;

/** A task's session key: the platform first (so the task acts as its person), then `task:<id>`. */
export function taskSessionKey(task: Pick<TaskRow, 'platform' | 'id'>): string {
  return `${task.platform}:task:${task.id}`;
}

/** Whether a session key is a background task's (its cut-off run is the task manager's to resume, not a chat's). */
export function isTaskSession(sessionKey: string): boolean {
  return /^[^:]+:task:t[0-9a-f]+$/.test(sessionKey);
}

/** "4 s", "2 min 5 s", "1 h 3 min". */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min${seconds % 60 ? ` ${seconds % 60} s` : ''}`;
  return `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
}

const escape = (value: string): string => value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** The block the model reads: which task, how it ended, what it found, what it spent. */
export function taskNotification(task: TaskRow): string {
  const result = task.result ?? '';
  const cut = result.length > RESULT_CHARS ? `${result.slice(0, RESULT_CHARS)}… (cut; task_output ${task.id} has all of it)` : result;
  const duration = (task.finishedAt ?? task.createdAt) - (task.startedAt ?? task.createdAt);
  return [
    '<task-notification>',
    `<task-id>${task.id}</task-id>`,
    `<status>${task.status}</status>`,
    `<summary>Background task "${escape(task.description)}" ${task.status}${task.error ? `: ${escape(task.error)}` : ''}</summary>`,
    ...(cut ? [`<result>${escape(cut)}</result>`] : []),
    `<usage><total_tokens>${task.inputTokens + task.outputTokens}</total_tokens><tool_uses>${task.toolUses}</tool_uses><duration_ms>${Math.round(duration)}</duration_ms></usage>`,
    '</task-notification>',
  ].join('\n');
}

/** What the person reads in the chat when a task ends (nothing when they stopped it: the Stop answer said so). */
export function taskEndMessage(task: TaskRow): string | undefined {
  const label = `Background task ${task.id} ("${task.description}")`;
  const elapsed = formatElapsed((task.finishedAt ?? task.createdAt) - (task.startedAt ?? task.createdAt));
  switch (task.status) {
    case 'completed':
      return `✅ ${label} is done (${elapsed}):\n\n${task.result || '(It wrote no answer.)'}`;
    case 'failed':
      return `⚠️ ${label} failed after ${elapsed}: ${task.error ?? 'unknown error'}.${task.result ? `\n\nWhat it had so far:\n\n${task.result}` : ''}`;
    case 'interrupted':
      return `⚠️ ${label} was cut off when hob stopped, and could not be resumed.${task.result ? `\n\nWhat it had so far:\n\n${task.result}` : ' It had no answer yet; start it again with /bg if you still need it.'}`;
    case 'stopped':
    case 'queued':
    case 'running':
      return undefined;
  }
}
