/**
 * `hob sessions list | show N | export N` — the terminal person's past conversations (the
 * owner's own, or everyone's with `--all`), read straight from the store, so it also
 * works while `hob start` runs. Export writes Markdown.
 */
import { writeFileSync } from 'node:fs';
import type { HobConfig } from '../config/schema.js';
import { UserFacingError } from '../core/errors.js';
import type { Block } from '../core/messages.js';
import { formatDate, sizeOf } from '../gateway/commands/sessions.js';
import { systemClock } from '../core/clock.js';
import { PeopleStore } from '../memory/people.js';
import { openStore } from '../store/open.js';
import type { SessionSummary, StoredMessage } from '../store/session-archive.js';

export type SessionsFlags = { all?: boolean; out?: string };

/** `consoleUserId`: the terminal's identity; its sessions are those of the person it is linked to. */
export function runSessions(config: HobConfig, consoleUserId: string, verb: string, which: string | undefined, flags: SessionsFlags, out: NodeJS.WritableStream = process.stdout): void {
  const store = openStore({ dataDir: config.data_dir, store: config.store }, { clock: systemClock });
  try {
    const archive = store.archive;
    const personId = new PeopleStore(store.people, systemClock).personId('console', consoleUserId);
    const owner = flags.all ? null : personId;
    const sessions = archive.list(owner, 200);
    switch (verb) {
      case 'list':
        if (!sessions.length) return void out.write(flags.all ? 'No sessions yet.\n' : 'No sessions of yours yet (--all lists everyone\'s).\n');
        sessions.forEach((session, i) => out.write(`${i + 1}. ${session.title} — ${formatDate(session.updatedAt)} — ${sizeOf(session)}  [${session.id}]\n`));
        return;
      case 'show':
      case 'export': {
        const session = pick(sessions, which, verb);
        const found = archive.messages(owner, session.id);
        if (!found) throw new UserFacingError(`No session ${which} of yours. See \`hob sessions list\`.`);
        const markdown = toMarkdown(session, found.messages);
        if (verb === 'export' && flags.out) {
          writeFileSync(flags.out, markdown);
          return void out.write(`Wrote ${found.messages.length} messages to ${flags.out}.\n`);
        }
        return void out.write(markdown);
      }
      default:
        throw new UserFacingError('Usage: hob sessions list | show N | export N [--out FILE] [--all]');
    }
  } finally {
    store.close();
  }
}

function pick(sessions: SessionSummary[], which: string | undefined, verb: string): SessionSummary {
  if (!which) throw new UserFacingError(`Usage: hob sessions ${verb} N (a number from \`hob sessions list\`, or a session id)`);
  const index = Number.parseInt(which, 10);
  const chosen = /^\d+$/.test(which) ? sessions[index - 1] : sessions.find((session) => session.id === which);
  if (!chosen) throw new UserFacingError(`No session ${which} of yours. See \`hob sessions list\`.`);
  return chosen;
}

/** The whole record as Markdown: every message, tool calls and results included, thinking left out. */
export function toMarkdown(session: SessionSummary, messages: StoredMessage[]): string {
  const lines = [`# ${session.title}`, '', `Session ${session.id}, ${formatDate(session.createdAt)} – ${formatDate(session.updatedAt)} (UTC), ${sizeOf(session)}.`, ''];
  for (const message of messages) {
    const body = message.content.map(blockMarkdown).filter(Boolean).join('\n\n');
    if (!body) continue;
    lines.push(`## ${message.role === 'user' ? 'Person' : 'hob'} — ${formatDate(message.at)}`, '', body, '');
  }
  return `${lines.join('\n')}\n`;
}

function blockMarkdown(block: Block): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `*(an image, ${block.mediaType})*`;
    case 'tool_use':
      return `**${block.name}** \`${JSON.stringify(block.input)}\``;
    case 'tool_result':
      return `${block.isError ? 'Error' : 'Result'}:\n\n\`\`\`\n${block.content}\n\`\`\``;
    case 'thinking':
    case 'redacted_thinking':
      return '';
    default: {
      const unknownBlock: never = block;
      return unknownBlock;
    }
  }
}
