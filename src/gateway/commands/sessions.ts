/**
 * `/sessions`, `/resume N`, `/compact`: a person's own past conversations, and compaction by
 * hand. Only in a direct chat (or the terminal): a group never sees one person's sessions.
 */
import type { PersonResolver } from '../../core/person.js';
import type { SessionArchive, SessionSummary } from '../../store/session-archive.js';
import type { InboundMessage } from '../channel.js';
import type { Conversation } from '../conversation.js';

export const SESSION_COMMANDS = [
  { command: 'sessions', description: 'Your past conversations (title, date, size)' },
  { command: 'resume', description: 'Reopen a past conversation: /resume N' },
  { command: 'compact', description: 'Summarize the older part of this conversation now' },
] as const;

const NAMES = new Set<string>(SESSION_COMMANDS.map((entry) => entry.command));

export type SessionCommandServices = {
  archive: SessionArchive;
  people: PersonResolver;
  conversation(): Conversation;
  reply(text: string): Promise<void>;
};

/** Handles a session command; false when `name` is not one. */
export async function runSessionCommand(name: string, args: string, message: InboundMessage, services: SessionCommandServices): Promise<boolean> {
  if (!NAMES.has(name)) return false;
  if (name === 'compact') {
    await services.reply(await services.conversation().engine.compactNow(message.userId));
    return true;
  }
  if (message.chatType !== 'dm') {
    await services.reply(`/${name} shows your own conversations, so it works only in a direct chat with me.`);
    return true;
  }
  const personId = services.people.personId(message.platform, message.userId);
  const sessions = services.archive.list(personId, 20);
  if (name === 'sessions') {
    await services.reply(sessionsText(sessions, services.conversation().engine.status().sessionId));
    return true;
  }
  const index = Number.parseInt(args, 10);
  const chosen = Number.isInteger(index) && index >= 1 ? sessions[index - 1] : undefined;
  if (!chosen) {
    await services.reply(sessions.length ? `Usage: /resume N, where N is a number from /sessions (1–${sessions.length}).` : 'You have no past conversations yet.');
    return true;
  }
  const conversation = services.conversation();
  if (conversation.busy) {
    await services.reply('I am still working on something here. /stop it first, then /resume.');
    return true;
  }
  if (!conversation.engine.resume(chosen.id, message.userId)) {
    await services.reply('That conversation is still open in another chat; continue it there, or /new there first.');
    return true;
  }
  await services.reply(`Resumed “${chosen.title}” (${chosen.messages} messages). Go on where you left off.`);
  return true;
}

/** The person's sessions, numbered for /resume, newest first. */
export function sessionsText(sessions: SessionSummary[], currentId: string): string {
  if (sessions.length === 0) return 'You have no past conversations yet.';
  const lines = sessions.map((session, i) => `${i + 1}. ${session.title} — ${formatDate(session.updatedAt)} — ${sizeOf(session)}${session.id === currentId ? ' (current)' : ''}`);
  return ['Your conversations, newest first:', ...lines, '', '/resume N reopens one; /new starts a fresh one.'].join('\n');
}

export function sizeOf(session: SessionSummary): string {
  const tokens = Math.round(session.chars / 4);
  const size = tokens >= 1000 ? `~${(tokens / 1000).toFixed(1)}k tokens` : `~${tokens} tokens`;
  return `${session.messages} message${session.messages === 1 ? '' : 's'}, ${size}`;
}

export function formatDate(at: number): string {
  return new Date(at).toISOString().slice(0, 16).replace('T', ' ');
}

