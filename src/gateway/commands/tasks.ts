/**
 * `/bg PROMPT` starts a background task from the chat (the chat stays free; the result comes
 * back here), and `/tasks` lists the person's tasks with their status, elapsed time and Stop /
 * Show buttons (`tk:stop:<id>`, `tk:show:<id>`). Whoever presses sees and stops only their own
 * tasks: another person's id is "not found", as an unknown one is.
 */
import type { PersonResolver } from '../../core/person.js';
import { describeTask } from '../../engine/tasks/task-tools.js';
import type { TaskManager } from '../../engine/tasks/task-manager.js';
import type { TaskRow } from '../../store/tasks.js';
import type { Button, ButtonPress, ChannelAdapter, InboundMessage, OutboundMessage } from '../channel.js';

export const TASK_COMMANDS = [
  { command: 'bg', description: 'Run a request in the background: /bg PROMPT (the result comes here)' },
  { command: 'tasks', description: 'Your background tasks: stop one or show its result' },
] as const;

export type TaskCommandServices = { tasks: TaskManager; people: PersonResolver; now(): number };

const isOpen = (task: TaskRow) => task.status === 'queued' || task.status === 'running';

/** `/tasks` as a message: one line per task, a Stop button for each open one, a Show button for each. */
export function tasksMessage(services: TaskCommandServices, platform: string, userId: string, note?: string): OutboundMessage {
  const personId = services.people.personId(platform, userId);
  const tasks = services.tasks.list(personId);
  const head = note ? `${note}\n\n` : '';
  if (tasks.length === 0) return { text: `${head}No background tasks. Start one with /bg and what you want done.`, plain: true };
  const buttons: Button[][] = tasks.slice(0, 10).map((task) => [
    ...(isOpen(task) ? [{ label: `Stop ${task.id}`, data: `tk:stop:${task.id}` }] : []),
    { label: `Show ${task.id}`, data: `tk:show:${task.id}` },
  ]);
  return { text: `${head}Your background tasks:\n${tasks.map((task) => describeTask(task, services.now())).join('\n')}`, plain: true, buttons };
}

/** Runs `/bg` or `/tasks`; the reply goes through `reply`, a list with buttons through `send`. */
export async function runTaskCommand(
  name: 'bg' | 'tasks',
  args: string,
  message: InboundMessage,
  key: string,
  services: TaskCommandServices,
  io: { reply(text: string): Promise<void>; send?(message: OutboundMessage): Promise<void> },
): Promise<void> {
  if (name === 'tasks') {
    const list = tasksMessage(services, message.platform, message.userId);
    await (io.send && list.buttons ? io.send(list) : io.reply(list.text));
    return;
  }
  if (!args) return io.reply('Usage: /bg PROMPT — I work on it in the background and post the result here; the chat stays free meanwhile.');
  const chat = { platform: message.platform, chatId: message.chatId, ...(message.threadId ? { threadId: message.threadId } : {}) };
  const created = services.tasks.create({ prompt: args, userId: message.userId, sessionKey: key, chat });
  if ('error' in created) return io.reply(created.error);
  await io.reply(`Started background task ${created.task.id} ("${created.task.description}"). I'll post the result here when it finishes; /tasks shows it meanwhile.`);
}

/** Handles a `tk:` button; false when the press is not one. */
export async function handleTaskPress(press: ButtonPress, adapter: ChannelAdapter, services: TaskCommandServices): Promise<boolean> {
  const match = /^tk:(stop|show):(t[0-9a-f]{8})$/.exec(press.data);
  if (!match) return false;
  const [, verb, id] = match as unknown as [string, 'stop' | 'show', string];
  const personId = services.people.personId(press.platform, press.userId);
  if (verb === 'stop') {
    const outcome = services.tasks.stop(id, personId);
    const text = outcome === 'not_found' ? `No task ${id} of yours.` : outcome === 'finished' ? `Task ${id} had already ended.` : `Stopped task ${id}.`;
    await press.answer(text);
    if (outcome === 'not_found') return true;
    // The task ends in a moment; the list is redrawn once it has.
    await services.tasks.settled(id);
    await adapter.edit(press.messageRef, tasksMessage(services, press.platform, press.userId, text)).catch(() => undefined);
    return true;
  }
  const task = services.tasks.get(id, personId);
  if (!task) {
    await press.answer(`No task ${id} of yours.`);
    return true;
  }
  await press.answer();
  const body = task.result ?? task.soFar ?? (isOpen(task) ? '(nothing written yet)' : '(no result)');
  const text = `${describeTask(task, services.now())}${task.error ? `\nError: ${task.error}` : ''}\n\n${body.length > 3000 ? `${body.slice(0, 2999)}…` : body}`;
  const buttons: Button[][] = isOpen(task) ? [[{ label: `Stop ${task.id}`, data: `tk:stop:${task.id}` }]] : [];
  await adapter.edit(press.messageRef, { text, plain: true, ...(buttons.length ? { buttons } : {}) }).catch(() => undefined);
  return true;
}
