import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { platformOf } from '../core/person.js';
import type { Logger } from '../logger.js';
import type { Db } from '../store/db.js';
import { embeddingsClient, reciprocalRankFusion, VectorIndex, type Embedder, type EmbeddingsSettings } from './embeddings.js';
import { extractFacts } from './extract.js';
import { PeopleStore } from './people.js';
import { ensurePersona, readPersona } from './persona.js';
import { ProfileStore, type Profile } from './profile.js';
import type { MemoryEntry, NewEntry, SaveResult } from '../store/memory/entry.js';
import { MemoryStore } from '../store/memory/entries.js';

export type MemoryOptions = {
  db: Db;
  clock: Clock;
  logger: Logger;
  dataDir: string;
  /** For people who have not set their own timezone. */
  defaultTimezone: string;
  snapshotChars: number;
  extract: 'rules' | 'off';
  embeddings?: EmbeddingsSettings;
  /** Tests hand in their own; by default the OpenAI-compatible client for `embeddings`. */
  embedder?: Embedder;
  /** First wait before a failed embedding is tried again (doubles up to 5 minutes). */
  retryDelayMs?: number;
};

/** Candidates each ranking contributes to the fusion. */
const FUSION_CANDIDATES = 20;
const EMBED_BATCH = 32;
const MAX_RETRY_DELAY_MS = 5 * 60 * 1000;
const QUERY_EMBED_TIMEOUT_MS = 5000;
/** One entry's line in the snapshot is cut here, so one long entry cannot take the budget. */
const SNAPSHOT_LINE_CHARS = 300;

/**
 * Everything hob remembers about people: who they are across platforms, their entries
 * (full-text, and vectors when an embeddings endpoint is set), their profile, the persona,
 * and what goes into a session's system prompt. Every call names the person it acts for.
 */
export class Memory {
  readonly people: PeopleStore;
  readonly entries: MemoryStore;
  readonly profiles: ProfileStore;
  private readonly vectors: VectorIndex | undefined;
  private readonly embedder: Embedder | undefined;
  /** Why semantic search is off, when it is. */
  readonly semanticProblem: string | undefined;
  /** Each session's prompt section, with the person it was built for. */
  private readonly prompts = new Map<string, { personId: string; section: string }>();
  private embedding: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs: number;
  private closed = false;

  constructor(private readonly options: MemoryOptions) {
    const { db, clock } = options;
    this.entries = new MemoryStore(db, clock, (error) => options.logger.warn({ err: errorMessage(error) }, 'memory: writing the search uses failed; tried again with the next ones'));
    this.people = new PeopleStore(db, clock, (from, to) => this.entries.reassign(from, to));
    this.profiles = new ProfileStore(db, clock);
    this.retryDelayMs = options.retryDelayMs ?? 5000;
    ensurePersona(options.dataDir);
    const wantsVectors = Boolean(options.embeddings || options.embedder);
    // Vectors written earlier must still be deletable after embeddings are switched off.
    if (wantsVectors || VectorIndex.present(db)) {
      const opened = VectorIndex.open(db);
      if ('index' in opened) this.vectors = opened.index;
      else this.semanticProblem = opened.error;
    }
    if (wantsVectors && this.vectors) {
      this.embedder = options.embedder ?? (options.embeddings ? embeddingsClient(options.embeddings) : undefined);
      this.embedPending();
    } else if (!wantsVectors) {
      this.semanticProblem = 'memory.embeddings is not set';
    }
  }

  /**
   * The person an identity belongs to (linked identities share one). A scheduled report runs
   * in its job's session (`job:<id>`, issue 11) and acts for the job's owner: their profile,
   * timezone and memory.
   */
  personFor(sessionKey: string, userId: string): string {
    const platform = platformOf(sessionKey);
    if (platform === 'job') {
      const job = this.options.db.prepare('SELECT owner_id FROM jobs WHERE id = ?').get(sessionKey.slice('job:'.length)) as { owner_id: string } | undefined;
      if (job) return job.owner_id;
    }
    return this.people.personId(platform, userId);
  }

  /** Whether search also ranks by meaning. */
  get semantic(): boolean {
    return Boolean(this.vectors && this.embedder);
  }

  save(personId: string, entry: NewEntry): SaveResult {
    const saved = this.entries.save(personId, entry);
    this.embedPending();
    return saved;
  }

  /**
   * The person's best entries for a question: full-text (bm25 blended with recency), fused
   * with the vector ranking by reciprocal rank when embeddings are configured. A failing
   * embeddings endpoint degrades to full-text, never to no answer.
   */
  async search(personId: string, question: string, limit = 5): Promise<MemoryEntry[]> {
    const text = this.entries.searchText(personId, question, Math.max(limit, FUSION_CANDIDATES));
    let ranked = text.map((hit) => hit.seq);
    if (this.vectors && this.embedder && question.trim()) {
      try {
        const [vector] = await this.embedder([question], AbortSignal.timeout(QUERY_EMBED_TIMEOUT_MS));
        if (vector) ranked = reciprocalRankFusion([ranked, this.vectors.nearest(personId, vector, Math.max(limit, FUSION_CANDIDATES))]);
      } catch (error) {
        this.options.logger.warn({ err: errorMessage(error) }, 'memory search: the embeddings endpoint failed; full-text only');
      }
    }
    const found: MemoryEntry[] = [];
    const usedSeqs: number[] = [];
    for (const seq of ranked) {
      if (found.length >= limit) break;
      const entry = this.entries.bySeq(seq);
      // The vector index is partitioned by person; this is the second lock on the door.
      if (entry && entry.personId === personId) {
        found.push(entry);
        usedSeqs.push(seq);
      }
    }
    this.entries.markUsed(usedSeqs);
    return found;
  }

  /** Deletes one entry of this person (database, full-text index, vector); false when not theirs. */
  forget(personId: string, id: string): boolean {
    const gone = this.entries.forget(personId, id);
    if (gone) this.vectors?.delete([gone.seq]);
    return Boolean(gone);
  }

  forgetAll(personId: string): number {
    const seqs = this.entries.forgetAll(personId);
    this.vectors?.delete(seqs);
    return seqs.length;
  }

  /** Puts a vector-less restored entry in line for embedding. */
  afterImport(): void {
    this.embedPending();
  }

  /** The person's IANA timezone (their profile's, else hob's default). */
  timezoneFor(personId: string): string {
    return this.profiles.get(personId).timezone ?? this.options.defaultTimezone;
  }

  /** Facts the person stated, saved as `extracted` entries (and "call me X" as their name). */
  observe(sessionKey: string, userId: string, text: string): void {
    if (this.options.extract === 'off') return;
    try {
      const personId = this.personFor(sessionKey, userId);
      const found = extractFacts(text);
      if (found.name) this.profiles.set(personId, 'name', found.name);
      for (const fact of found.facts) this.save(personId, { content: fact.content, tags: fact.tags, source: 'extracted' });
    } catch (error) {
      this.options.logger.warn({ session: sessionKey, err: errorMessage(error) }, 'memory extraction failed');
    }
  }

  /**
   * The profile and the most used, then most recent entries, one line each, within
   * `snapshot_chars` (whole lines only), or less when the window asks for less.
   */
  snapshot(personId: string, maxChars = this.options.snapshotChars): string {
    const budget = Math.min(maxChars, this.options.snapshotChars);
    if (budget <= 0) return '';
    const lines: string[] = [];
    let used = 0;
    const add = (line: string): boolean => {
      if (used + line.length + 1 > budget) return false;
      lines.push(line);
      used += line.length + 1;
      return true;
    };
    for (const line of profileLines(this.profiles.get(personId))) add(line);
    const { mostUsed, recent } = this.entries.snapshotCandidates(personId, 50);
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
  promptSection(context: { sessionKey: string; sessionId: string; userId: string; shared: boolean; budget?: { snapshotChars: number; personaChars: number; lean: boolean } }): string {
    const { budget } = context;
    const personId = this.personFor(context.sessionKey, context.userId);
    const key = budget ? `${context.sessionId}:${budget.snapshotChars}:${budget.personaChars}:${budget.lean}` : context.sessionId;
    const cached = this.prompts.get(key);
    if (cached !== undefined && cached.personId === personId) return cached.section;
    const whole = readPersona(this.options.dataDir);
    const persona = budget && whole.length > budget.personaChars ? `${whole.slice(0, budget.personaChars).trimEnd()}…` : whole;
    const parts = persona ? [persona] : [];
    if (context.shared) {
      parts.push('This is a shared group conversation: several people talk here. Do not tell one person what you remember about another. The memory tools act for whoever asked.');
    } else {
      const profile = this.profiles.get(personId);
      const timezone = this.timezoneFor(personId);
      const about = [
        profile.name ? `Call the person ${profile.name}.` : '',
        profile.language ? `Answer in ${profile.language} unless they write in another language.` : '',
        profile.style ? `Their preferred answer style: ${profile.style}.` : '',
        profile.notes ? `Notes: ${profile.notes}` : '',
        `Their timezone is ${timezone}; at the start of this session their local time was ${localTime(new Date(this.options.clock.now()), timezone)}.`,
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
    if (this.prompts.size > 1000) this.prompts.clear();
    this.prompts.set(key, { personId, section });
    return section;
  }

  /** Resolves when no embedding is in flight (tests, and the CLI before it exits). */
  async settled(): Promise<void> {
    while (this.embedding) await this.embedding;
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    try {
      this.entries.flushUses();
    } catch (error) {
      this.options.logger.warn({ err: errorMessage(error) }, 'memory: writing the search uses failed on close; they are lost');
    }
  }

  /** Embeds waiting entries in the background, off the reply's path; a failure retries later. */
  private embedPending(): void {
    if (!this.vectors || !this.embedder || this.embedding || this.retryTimer || this.closed) return;
    const vectors = this.vectors;
    const embedder = this.embedder;
    this.embedding = (async () => {
      await Promise.resolve();
      for (;;) {
        if (this.closed) return;
        const batch = this.entries.unembedded(EMBED_BATCH);
        if (batch.length === 0) return;
        const embedded = await embedder(batch.map((item) => item.text));
        if (this.closed) return;
        this.options.db.transaction(() => {
          batch.forEach((item, index) => {
            // Forgotten while its vector was on the way: nothing to store.
            if (!this.entries.bySeq(item.seq)) return;
            vectors.put(item.seq, item.personId, embedded[index] as Float32Array);
            this.entries.markEmbedded(item.seq);
          });
        })();
        this.retryDelayMs = this.options.retryDelayMs ?? 5000;
      }
    })()
      .catch((error: unknown) => {
        this.options.logger.warn({ err: errorMessage(error), retryInMs: this.retryDelayMs }, 'memory: embedding failed; the entries are kept and tried again later');
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.embedPending();
        }, this.retryDelayMs);
        this.retryTimer.unref();
        this.retryDelayMs = Math.min(this.retryDelayMs * 2, MAX_RETRY_DELAY_MS);
      })
      .finally(() => (this.embedding = undefined));
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

/** "14:05 on Tuesday 1 December 2026". */
function localTime(now: Date, timezone: string): string {
  const time = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, hour: '2-digit', minute: '2-digit', hour12: false }).format(now);
  const day = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' }).format(now);
  return `${time} on ${day}`;
}
