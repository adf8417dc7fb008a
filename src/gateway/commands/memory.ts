import { errorMessage } from '../../core/errors.js';
import type { Memory } from '../../memory/memory.js';
import { entryLine } from '../../memory/memory.js';
import { LINK_CODE_TTL_MS } from '../../memory/people.js';
import { isProfileField, PROFILE_FIELDS } from '../../memory/profile.js';
import type { Button, ButtonPress, ChannelAdapter } from '../channel.js';

/** The memory commands, for the platforms' menus and /help. */
export const MEMORY_COMMANDS = [
  { command: 'memory', description: 'What I remember about you, with Forget buttons: /memory [page]' },
  { command: 'remember', description: 'Remember something: /remember TEXT' },
  { command: 'forget', description: 'Forget an entry: /forget ID, or /forget all' },
  { command: 'settings', description: 'Your name, timezone, language, style: /settings [field value]' },
  { command: 'link', description: 'Link your accounts across platforms: /link, then /link CODE on the other' },
  { command: 'unlink', description: 'Separate this account from your other linked accounts' },
] as const;

export type MemoryCommandName = (typeof MEMORY_COMMANDS)[number]['command'];

export function isMemoryCommand(name: string): name is MemoryCommandName {
  return MEMORY_COMMANDS.some((entry) => entry.command === name);
}

/**
 * Who sent a command, and what their chat can show. `trusted`: on allow_from or paired (not
 * only let in by a group on allowed_groups); linking accounts is for them alone.
 */
export type CommandSender = { platform: string; userId: string; private: boolean; buttons: boolean; trusted: boolean };

export type MemoryReply = { text: string; buttons?: Button[][] };

const PAGE_SIZE = 5;
/** Button data: `mem:<verb>:<userId>[:<arg>[:<arg>]]`; the presser must be the person it was shown to. */
const BUTTON = /^mem:(p|f|all|keep):([^:]{1,40})(?::([^:]{1,20}))?(?::(\d{1,7}))?$/;

/** Runs one memory command for the person who sent it; never throws (errors are answers). */
export function runMemoryCommand(memory: Memory, name: MemoryCommandName, args: string, sender: CommandSender): MemoryReply {
  try {
    return answer(memory, name, args.trim(), sender);
  } catch (error) {
    return { text: errorMessage(error) };
  }
}

function answer(memory: Memory, name: MemoryCommandName, args: string, sender: CommandSender): MemoryReply {
  const personId = memory.people.personId(sender.platform, sender.userId);
  switch (name) {
    case 'memory': {
      if (!sender.private) return { text: 'I show what I remember about you only in a private chat: send me /memory there.' };
      const page = Math.max(1, Number.parseInt(args, 10) || 1);
      return memoryPage(memory, personId, sender, (page - 1) * PAGE_SIZE);
    }
    case 'remember': {
      if (!args) return { text: 'Usage: /remember TEXT — for example /remember my car is parked on level 3.' };
      const { entry, updated } = memory.save(personId, { content: args, source: 'command' });
      return { text: `${updated ? 'Updated what I knew' : 'I will remember that'} (${entry.id}).` };
    }
    case 'forget': {
      if (!args) return { text: 'Usage: /forget ID (the id is shown by /memory), or /forget all.' };
      const [first, second] = args.split(/\s+/);
      if (first?.toLowerCase() === 'all') {
        const count = memory.entries.count(personId);
        if (count === 0) return { text: 'I do not remember anything about you.' };
        if (second?.toLowerCase() === 'yes') return { text: forgotAll(memory.forgetAll(personId)) };
        const question = `Forget all ${count} entr${count === 1 ? 'y' : 'ies'} I remember about you? This cannot be undone.`;
        if (!sender.buttons) return { text: `${question} Send /forget all yes to confirm.` };
        return {
          text: question,
          buttons: [[{ label: `Yes, forget all ${count}`, data: `mem:all:${sender.userId}` }, { label: 'Keep them', data: `mem:keep:${sender.userId}` }]],
        };
      }
      return { text: memory.forget(personId, first ?? '') ? `Forgot ${first}.` : `Memory ${first} was not found.` };
    }
    case 'settings':
      return { text: settings(memory, personId, args, sender) };
    case 'link': {
      // Linking joins two people's memories: only people hob knows by name, face to face.
      if (!sender.trusted) return { text: 'Linking accounts is only for people on this hob\'s allow list (allow_from) or paired with it. Ask an owner to add you.' };
      if (!sender.private) return { text: `Send /link${args ? ' CODE' : ''} to me in a private chat: link codes must stay between us.` };
      if (!args) {
        const code = memory.people.createLinkCode(personId);
        return { text: `Your link code is ${code}. Within ${LINK_CODE_TTL_MS / 60_000} minutes, send /link ${code} to me from your other account (another platform, or the terminal) to make them one person with one memory.` };
      }
      const outcome = memory.people.redeem(args, sender.platform, sender.userId);
      return { text: outcome.ok ? 'Linked: this account now shares memory and settings with your other account.' : outcome.reason };
    }
    case 'unlink': {
      const outcome = memory.people.unlink(sender.platform, sender.userId);
      return { text: outcome.ok ? 'Unlinked: this account is on its own again, with an empty memory. What you saved stays with your other account.' : outcome.reason };
    }
  }
}

function settings(memory: Memory, personId: string, args: string, sender: CommandSender): string {
  if (!args) {
    if (!sender.private) return 'I show your settings only in a private chat. To change one here: /settings FIELD VALUE.';
    const profile = memory.profiles.get(personId);
    const lines = PROFILE_FIELDS.map((field) => `${field}: ${profile[field] ?? (field === 'timezone' ? `${memory.timezoneFor(personId)} (default)` : '—')}`);
    return [...lines, '', `Change one with /settings FIELD VALUE (fields: ${PROFILE_FIELDS.join(', ')}); /settings FIELD - clears it.`].join('\n');
  }
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(args);
  const field = match?.[1]?.toLowerCase() ?? '';
  if (!isProfileField(field)) return `Unknown setting "${field}". Fields: ${PROFILE_FIELDS.join(', ')}.`;
  const value = (match?.[2] ?? '').trim();
  if (!value) return `Usage: /settings ${field} VALUE (or /settings ${field} - to clear it).`;
  const stored = memory.profiles.set(personId, field, value === '-' ? '' : value);
  return stored ? `Your ${field} is now ${stored}.` : `Cleared your ${field}.`;
}

function memoryPage(memory: Memory, personId: string, sender: CommandSender, offset: number): MemoryReply {
  const total = memory.entries.count(personId);
  if (total === 0) return { text: 'I do not remember anything about you yet. Tell me, or use /remember TEXT.' };
  const start = Math.min(offset, Math.floor((total - 1) / PAGE_SIZE) * PAGE_SIZE);
  const entries = memory.entries.list(personId, { offset: start, limit: PAGE_SIZE });
  const pages = Math.ceil(total / PAGE_SIZE);
  const page = start / PAGE_SIZE + 1;
  const lines = entries.map((entry, index) => `${start + index + 1}. ${entryLine(entry).slice(2)}${entry.source === 'extracted' ? ' (noticed)' : ''}`);
  const text = [`What I remember about you (${total}; page ${page} of ${pages}):`, ...lines].join('\n');
  if (!sender.buttons) {
    const more = page < pages ? `\nMore: /memory ${page + 1}.` : '';
    return { text: `${text}\n\nForget one with /forget ID, or everything with /forget all.${more}` };
  }
  const forgetRow = entries.map((entry, index) => ({ label: `Forget ${start + index + 1}`, data: `mem:f:${sender.userId}:${entry.id}:${start}` }));
  const nav: Button[] = [];
  if (start > 0) nav.push({ label: '◀ Newer', data: `mem:p:${sender.userId}:${start - PAGE_SIZE}` });
  if (start + PAGE_SIZE < total) nav.push({ label: 'Older ▶', data: `mem:p:${sender.userId}:${start + PAGE_SIZE}` });
  return { text, buttons: [forgetRow.slice(0, 3), forgetRow.slice(3), nav].filter((row) => row.length > 0) };
}

function forgotAll(count: number): string {
  return `Forgot all ${count} entr${count === 1 ? 'y' : 'ies'}. Nothing about you is left in my memory.`;
}

/** A press on a `mem:` button; false when the data is not one of ours. */
export async function handleMemoryPress(memory: Memory, press: ButtonPress, adapter: ChannelAdapter): Promise<boolean> {
  if (!press.data.startsWith('mem:')) return false;
  const match = BUTTON.exec(press.data);
  if (!match) {
    await press.answer('This button is no longer active.');
    return true;
  }
  const [, verb, ownerId, first, second] = match;
  if (ownerId !== press.userId) {
    await press.answer('This button is for someone else.');
    return true;
  }
  const personId = memory.people.personId(press.platform, press.userId);
  // Memory buttons page and forget; none of them links accounts.
  const sender: CommandSender = { platform: press.platform, userId: press.userId, private: true, buttons: true, trusted: false };
  switch (verb) {
    case 'p':
      await adapter.edit(press.messageRef, memoryPage(memory, personId, sender, Number(first ?? 0)));
      await press.answer();
      return true;
    case 'f': {
      const forgot = memory.forget(personId, first ?? '');
      await press.answer(forgot ? 'Forgotten.' : 'That entry was not found.');
      await adapter.edit(press.messageRef, memoryPage(memory, personId, sender, Number(second ?? 0)));
      return true;
    }
    case 'all':
      await adapter.edit(press.messageRef, { text: forgotAll(memory.forgetAll(personId)) });
      await press.answer('Done.');
      return true;
    case 'keep':
      await adapter.edit(press.messageRef, { text: 'Kept everything.' });
      await press.answer();
      return true;
  }
  return true;
}
