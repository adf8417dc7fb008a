/**
 * The terminal's commands that reach past the conversation: past sessions, jobs,
 * permissions, memory and extensions. The person at the terminal is hob's owner. Each answers
 * in text, or gives the prompt to run (a skill's expansion); anything else is a message.
 */
import { platformOf, unlinkedPeople } from '../core/person.js';
import type { QueryEngine } from '../engine/query-engine.js';
import type { TaskManager } from '../engine/tasks/task-manager.js';
import { describeTask } from '../engine/tasks/task-tools.js';
import { jobsMessage } from '../gateway/commands/jobs.js';
import { isMemoryCommand, runMemoryCommand } from '../gateway/commands/memory.js';
import { sessionsText } from '../gateway/commands/sessions.js';
import type { ExtensionCommands } from '../gateway/commands/skills.js';
import type { Memory } from '../memory/memory.js';
import type { PermissionAdmin } from '../policy/permission-admin.js';
import { askerOf, changeJob, type JobAccess } from '../scheduler/tools.js';
import type { SessionArchive } from '../store/session-archive.js';

/** What the terminal's commands act on; the optional parts are off when hob runs without them. */
export type ChatCommandContext = {
  engine: QueryEngine;
  userId: string;
  /** `/permissions`: the person at the terminal is the owner. */
  permissions?: PermissionAdmin;
  /** /memory, /remember, /forget, /settings, /link for the person at the terminal (the owner). */
  memory?: Memory;
  /** `/skill`, plugin commands and `/mcp` (issue 12). */
  extensions?: ExtensionCommands;
  /** `/sessions` and `/resume N`: the terminal person's own past conversations. */
  archive?: SessionArchive;
  /** `/jobs [pause|resume|delete ID]`: reminders and reports (issue 11). */
  jobs?: JobAccess;
  /** `/bg PROMPT`, `/tasks [stop|show ID]`: background tasks (issue 21), under hob start. */
  tasks?: TaskManager;
};

export const HELP = [
  'Commands: /new (fresh conversation), /stop (stop the current run), /status, /usage, /permissions [mode M | forget N], /skill [NAME args], /mcp, /help, /exit.',
  'Memory: /memory [page], /remember TEXT, /forget ID | all, /settings [field value], /link [CODE], /unlink.',
  'Reminders and reports: /jobs, /jobs pause | resume | delete ID.',
  'Background tasks: /bg PROMPT (the result is printed here when done), /tasks, /tasks stop | show ID.',
  'Long conversations: /compact (summarize the older part now), /sessions (your past conversations), /resume N.',
  'Approvals: y = allow once, a = always allow this exact command or path, n = deny.',
  'Ctrl-C stops a run; Ctrl-D or /exit quits.',
].join('\n');

/** The help text, with the plugins' commands when there are any. */
export function helpText(extensions: ExtensionCommands | undefined): string {
  const plugins = extensions?.menu() ?? [];
  return plugins.length ? `${HELP}\nPlugin commands: ${plugins.map((entry) => `/${entry.command} (${entry.description})`).join(', ')}.` : HELP;
}

/** A line typed at the terminal: a command's answer, or the text to send to the model. */
export async function runChatCommand(line: string, context: ChatCommandContext): Promise<{ kind: 'reply' | 'prompt'; text: string }> {
  const { engine, userId } = context;
  const reply = (text: string) => ({ kind: 'reply' as const, text });
  if (line === '/compact') return reply(await engine.compactNow(userId));
  const sessionCommand = /^\/(sessions|resume)(?:\s+(\S+))?$/.exec(line);
  if (sessionCommand && context.archive) return reply(sessionsCommand(context, context.archive, sessionCommand[1] as string, sessionCommand[2]));
  const jobs = /^\/jobs(?:\s+(\S+))?(?:\s+(\S+))?$/.exec(line);
  if (jobs && context.jobs) return reply(jobsCommand(context, context.jobs, jobs[1], jobs[2]));
  const task = /^\/(bg|tasks)(?:\s+([\s\S]*))?$/.exec(line);
  if (task && context.tasks) return reply(tasksCommand(context, context.tasks, task[1] as 'bg' | 'tasks', (task[2] ?? '').trim()));
  const permissions = /^\/permissions(?:\s+(.*))?$/.exec(line);
  if (permissions && context.permissions) return reply(context.permissions.command(permissions[1] ?? '', userId));
  const command = /^\/([a-z0-9_]+)(?:\s+([\s\S]*))?$/.exec(line);
  const commandName = command?.[1] ?? '';
  if (context.memory && isMemoryCommand(commandName)) {
    // The person at the terminal is hob's owner.
    const sender = { platform: platformOf(engine.sessionKey), userId, private: true, buttons: false, trusted: true };
    return reply(runMemoryCommand(context.memory, commandName, command?.[2] ?? '', sender).text);
  }
  let prompt = line;
  if (command && context.extensions) {
    if (commandName === 'mcp') return reply(context.extensions.describeMcp());
    const expansion = context.extensions.expand(commandName, (command[2] ?? '').trim());
    if (expansion?.kind === 'reply') return reply(expansion.text);
    if (expansion?.kind === 'prompt') prompt = expansion.text;
  }
  if (prompt.startsWith('/') && !prompt.includes(' ') && prompt.length < 20) return reply(`Unknown command ${prompt}. ${HELP.split('\n')[0]}`);
  return { kind: 'prompt', text: prompt };
}

/** `/jobs` lists (the terminal's person owns hob: everyone's jobs); `/jobs pause ID` and so on change one. */
function jobsCommand({ engine, userId }: ChatCommandContext, access: JobAccess, verb: string | undefined, id: string | undefined): string {
  const platform = platformOf(engine.sessionKey);
  if (verb === undefined) return `${jobsMessage(access, platform, userId, undefined, false).text}\nChange one with /jobs pause | resume | delete ID.`;
  if ((verb === 'pause' || verb === 'resume' || verb === 'delete') && id) return changeJob(access, askerOf(access, platform, userId), verb, id);
  return 'Usage: /jobs (list), /jobs pause ID, /jobs resume ID, /jobs delete ID.';
}

/** `/bg PROMPT` starts a task whose result is printed here; `/tasks` lists them, `/tasks stop ID` and `/tasks show ID` act on one. */
function tasksCommand({ engine, userId, memory }: ChatCommandContext, tasks: TaskManager, name: 'bg' | 'tasks', args: string): string {
  const platform = platformOf(engine.sessionKey);
  const personId = (memory?.people ?? unlinkedPeople).personId(platform, userId);
  if (name === 'bg') {
    if (!args) return 'Usage: /bg PROMPT (the result is printed here when it is done).';
    const created = tasks.create({ prompt: args, userId, sessionKey: engine.sessionKey, chat: { platform, chatId: userId } });
    return 'error' in created ? created.error : `Started background task ${created.task.id}. Its result is printed here when it is done; /tasks shows it meanwhile.`;
  }
  const [verb, id = ''] = args.split(/\s+/);
  if (!verb) {
    const list = tasks.list(personId);
    return list.length ? `${list.map((task) => describeTask(task, Date.now())).join('\n')}\nStop one with /tasks stop ID, read one with /tasks show ID.` : 'No background tasks. Start one with /bg PROMPT.';
  }
  if (verb === 'stop') {
    const outcome = tasks.stop(id, personId);
    return outcome === 'not_found' ? `No task ${id} of yours.` : outcome === 'finished' ? `Task ${id} had already ended.` : `Stopped task ${id}.`;
  }
  if (verb === 'show') {
    const found = tasks.get(id, personId);
    return found ? `${describeTask(found, Date.now())}${found.error ? `\nError: ${found.error}` : ''}\n\n${found.result ?? found.soFar ?? '(nothing yet)'}` : `No task ${id} of yours.`;
  }
  return 'Usage: /tasks, /tasks stop ID, /tasks show ID.';
}

/** `/sessions` lists the person's past conversations; `/resume N` continues one here. */
function sessionsCommand({ engine, userId, memory }: ChatCommandContext, archive: SessionArchive, name: string, arg: string | undefined): string {
  // The linked person's sessions (every platform and the terminal together), not only this identity's.
  const people = memory?.people ?? unlinkedPeople;
  const sessions = archive.list(people.personId(platformOf(engine.sessionKey), userId), 20);
  if (name === 'sessions') return sessionsText(sessions, engine.status().sessionId);
  const chosen = arg && /^\d+$/.test(arg) ? sessions[Number(arg) - 1] : undefined;
  if (!chosen) return sessions.length ? `Usage: /resume N (1–${sessions.length}, from /sessions).` : 'You have no past conversations yet.';
  return engine.resume(chosen.id, userId) ? `Resumed “${chosen.title}” (${chosen.messages} messages).` : 'That conversation is still open in another chat; continue it there, or /new there first.';
}
