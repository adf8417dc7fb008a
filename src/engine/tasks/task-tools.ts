/**
 * The model's side of background tasks: task_create (when the person asks for something long),
 * task_list, task_output and task_stop. Each sees only the person's own tasks: another
 * person's id is "not found", as an unknown one is.
 */
import { z } from 'zod';
import { platformOf, type PersonResolver } from '../../core/person.js';
import type { TaskRow } from '../../store/tasks.js';
import { defineTool, type AnyTool, type ToolContext } from '../../tools/tool.js';
import { formatElapsed } from './notification.js';
import type { TaskManager } from './task-manager.js';

const taskId = z.string().regex(/^t[0-9a-f]{8}$/, { error: 'expected a task id like t1a2b3c4d (task_list shows them)' });

export function taskTools(manager: TaskManager, people: PersonResolver, now: () => number): AnyTool[] {
  const personOf = (ctx: ToolContext) => people.personId(platformOf(ctx.sessionKey), ctx.userId);
  const notFound = (id: string) => ({ content: `There is no task ${id} of yours. task_list shows your tasks.`, isError: true });
  const tools = [
    defineTool({
      name: 'task_create',
      description:
        'Starts a background task: a run apart from this conversation that works on its own and posts its result to this chat when done, while the chat stays free. Use it when the person asks for something long (research across many pages, a long build). The prompt must be self-contained.',
      input: z.strictObject({
        prompt: z.string().min(1).describe('The whole task, self-contained: the task sees nothing of this conversation'),
        description: z.string().max(60).optional().describe('A short label the person sees in /tasks'),
      }),
      // Asks nobody: it only starts the person's own work, and the task itself may use only pre-allowed tools.
      readOnly: true,
      run: async (input, ctx) => {
        if (ctx.worker) return { content: 'Refused: a worker cannot start background tasks.', isError: true };
        if (!ctx.chat) return { content: 'Background tasks can only be started from a chat (their result is posted there).', isError: true };
        const created = manager.create({ prompt: input.prompt, description: input.description, userId: ctx.userId, sessionKey: ctx.sessionKey, chat: ctx.chat });
        if ('error' in created) return { content: created.error, isError: true };
        return `Started background task ${created.task.id} ("${created.task.description}"). Its result will be posted to this chat when it is done; tell the person so, and do not wait for it.`;
      },
    }),
    defineTool({
      name: 'task_list',
      description: "Lists the person's background tasks: id, status, elapsed time, description.",
      input: z.strictObject({}),
      readOnly: true,
      run: async (_input, ctx) => {
        const tasks = manager.list(personOf(ctx));
        if (tasks.length === 0) return 'No background tasks.';
        return tasks.map((task) => describeTask(task, now())).join('\n');
      },
    }),
    defineTool({
      name: 'task_output',
      description: "A background task's status and its result (or what it has written so far, while it runs).",
      input: z.strictObject({ task_id: taskId }),
      readOnly: true,
      run: async (input, ctx) => {
        const task = manager.get(input.task_id, personOf(ctx));
        if (!task) return notFound(input.task_id);
        const body = task.result ?? task.soFar ?? (task.status === 'running' || task.status === 'queued' ? '(nothing written yet)' : '(no result)');
        return `${describeTask(task, now())}\n${task.error ? `Error: ${task.error}\n` : ''}\n${body}`;
      },
    }),
    defineTool({
      name: 'task_stop',
      description: "Stops one of the person's running background tasks.",
      input: z.strictObject({ task_id: taskId }),
      // Stopping the person's own task changes nothing else.
      readOnly: true,
      run: async (input, ctx) => {
        switch (manager.stop(input.task_id, personOf(ctx))) {
          case 'not_found':
            return notFound(input.task_id);
          case 'finished':
            return `Task ${input.task_id} had already ended.`;
          case 'stopping':
          case 'stopped':
            return `Stopped task ${input.task_id}.`;
        }
      },
    }),
  ];
  return tools as unknown as AnyTool[];
}

/** One line: id, status, elapsed time (running) or how long it took, description. */
export function describeTask(task: TaskRow, now: number): string {
  const from = task.startedAt ?? task.createdAt;
  const elapsed = formatElapsed((task.finishedAt ?? now) - from);
  return `${task.id} · ${task.status} · ${elapsed} · ${task.description}`;
}
