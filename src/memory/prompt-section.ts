/**
 * What a session's system prompt carries from memory: the persona, the person's profile and
 * local time, and a snapshot of their entries within a budget. Built once per session and
 * kept, so the prompt cache holds.
 */
import type { Clock } from '../core/clock.js';
import { formatClockTime, formatLongDay } from '../core/zoned-format.js';
import type { MemoryEntryRepository } from '../store/memory/entries.js';
import type { MemoryEntry } from '../store/memory/entry.js';
import { PersonaFile } from './persona.js';
import type { Profile, ProfileStore } from './profile.js';

/** One entry's line in the snapshot is cut here, so one long entry cannot take the budget. */
const SNAPSHOT_LINE_CHARS = 300;

/** The session a prompt section is for, and the budget a small model window sets. */
export type PromptContext = {
  sessionKey: string;
  sessionId: string;
  userId: string;
  shared: boolean;
  budget?: { snapshotChars: number; personaChars: number; lean: boolean };
};

export type PromptSectionDeps = {
  profiles: ProfileStore;
  entries: MemoryEntryRepository;
  clock: Clock;
  dataDir: string;
  /** `memory.snapshot_chars`: the most a snapshot takes. */
  snapshotChars: number;
  personFor(sessionKey: string, userId: string): string;
  timezoneFor(personId: string): string;
};

export class PromptSections {
  /** Each session's prompt section, with the person it was built for. */
  private readonly cache = new Map<string, { personId: string; section: string }>();
  private readonly persona: PersonaFile;

  constructor(private readonly deps: PromptSectionDeps) {
    this.persona = new PersonaFile(deps.dataDir);
  }

  /**
   * The profile and the most used, then most recent entries, one line each, within
   * `snapshot_chars` (whole lines only), or less when the window asks for less.
   */
  snapshot(personId: string, maxChars = this.deps.snapshotChars): string {
    const budget = Math.min(maxChars, this.deps.snapshotChars);
    if (budget <= 0) return '';
    const lines: string[] = [];
    let used = 0;
    const add = (line: string): boolean => {
      if (used + line.length + 1 > budget) return false;
      lines.push(line);
      used += line.length + 1;
      return true;
    };
    for (const line of profileLines(this.deps.profiles.get(personId))) add(line);
    const { mostUsed, recent } = this.deps.entries.snapshotCandidates(personId, 50);
    const seen = new Set<string>();
    for (const entry of [...mostUsed, ...recent]) {
      if (seen.has(entry.id)) continue;
      seen.add(entry.id);
      if (!add(entryLine(entry))) break;
    }
    return lines.join('\n');
  }

  /**
   * The system prompt's memory part for one session: persona, the person's profile and
   * local time, and the snapshot. Built when the session starts and kept for it (the prompt
   * cache holds); a new session reads the persona and memory again. When the person behind
   * the session changes (`/link`, `/unlink`), it is built again at once: an unlinked account
   * no longer carries the other person's memory, also in a session that was open. A small
   * model window (`lean`) gets less of the persona and the snapshot, and shorter guidance.
   */
  section(context: PromptContext): string {
    const { budget } = context;
    const personId = this.deps.personFor(context.sessionKey, context.userId);
    const key = budget ? `${context.sessionId}:${budget.snapshotChars}:${budget.personaChars}:${budget.lean}` : context.sessionId;
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.personId === personId) return cached.section;
    const whole = this.persona.current();
    const persona = budget && whole.length > budget.personaChars ? `${whole.slice(0, budget.personaChars).trimEnd()}…` : whole;
    const parts = persona ? [persona] : [];
    if (context.shared) {
      parts.push('This is a shared group conversation: several people talk here. Do not tell one person what you remember about another. The memory tools act for whoever asked.');
    } else {
      const profile = this.deps.profiles.get(personId);
      const timezone = this.deps.timezoneFor(personId);
      const about = [
        profile.name ? `Call the person ${profile.name}.` : '',
        profile.language ? `Answer in ${profile.language} unless they write in another language.` : '',
        profile.style ? `Their preferred answer style: ${profile.style}.` : '',
        profile.notes ? `Notes: ${profile.notes}` : '',
        `Their timezone is ${timezone}; at the start of this session their local time was ${localTime(new Date(this.deps.clock.now()), timezone)}.`,
      ].filter(Boolean);
      parts.push(about.join('\n'));
      const snapshot = this.snapshot(personId, budget?.snapshotChars);
      const entries = snapshot.split('\n').filter((line) => line.startsWith('- ['));
      if (entries.length) parts.push(`What you remember about them (ids in brackets; memory_search finds more):\n${entries.join('\n')}`);
    }
    parts.push(
      budget?.lean
        ? 'Memory: memory_search before answering about the person\'s life or plans; memory_save what they ask you to remember.'
        : 'Memory: memory_search before answering about the person\'s life, plans, preferences or setup; memory_save what they ask you to remember or what will matter later; profile_update a stated preference (name, timezone, language, style).',
    );
    const section = parts.join('\n\n');
    if (this.cache.size > 1000) this.cache.clear();
    this.cache.set(key, { personId, section });
    return section;
  }
}

function profileLines(profile: Profile): string[] {
  const lines: string[] = [];
  if (profile.name) lines.push(`Name: ${profile.name}`);
  if (profile.language) lines.push(`Language: ${profile.language}`);
  if (profile.style) lines.push(`Style: ${profile.style}`);
  if (profile.timezone) lines.push(`Timezone: ${profile.timezone}`);
  if (profile.notes) lines.push(`Notes: ${profile.notes}`);
  return lines;
}

export function entryLine(entry: MemoryEntry): string {
  const text = `${entry.title ? `${entry.title}: ` : ''}${entry.content}`.replace(/\s+/g, ' ');
  const cut = text.length > SNAPSHOT_LINE_CHARS ? `${text.slice(0, SNAPSHOT_LINE_CHARS - 1)}…` : text;
  return `- [${entry.id}] ${cut}`;
}

/** "14:05 on Tuesday, 1 December 2026". */
function localTime(now: Date, timezone: string): string {
  return `${formatClockTime(now, timezone)} on ${formatLongDay(now, timezone)}`;
}
