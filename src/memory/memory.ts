import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { platformOf } from '../core/person.js';
import { TurnMemo } from '../core/turn-memo.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';
import type { VectorRepository } from '../store/vectors.js';
import { embeddingsClient, reciprocalRankFusion, type Embedder, type EmbeddingsSettings } from './embeddings.js';
import { extractFacts } from './extract.js';
import { PeopleStore } from './people.js';
import { ensurePersona } from './persona.js';
import { ProfileStore } from './profile.js';
import { PromptSections, type PromptContext } from './prompt-section.js';

export { entryLine } from './prompt-section.js';
import type { MemoryEntry, NewEntry, SaveResult } from '../store/memory/entry.js';
import type { MemoryEntryRepository } from '../store/memory/entries.js';

export type MemoryOptions = {
  store: Store;
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

/**
 * Everything hob remembers about people: who they are across platforms, their entries
 * (full-text, and vectors when an embeddings endpoint is set), their profile, the persona,
 * and what goes into a session's system prompt. Every call names the person it acts for.
 */
export class Memory {
  readonly people: PeopleStore;
  readonly entries: MemoryEntryRepository;
  readonly profiles: ProfileStore;
  private readonly vectors: VectorRepository | undefined;
  private readonly embedder: Embedder | undefined;
  /** Why semantic search is off, when it is. */
  readonly semanticProblem: string | undefined;
  private readonly prompts: PromptSections;
  private embedding: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs: number;
  private closed = false;

  constructor(private readonly options: MemoryOptions) {
    const { store, clock } = options;
    this.entries = store.memory;
    // One memo for both: linking two identities moves a profile as well.
    const memo = new TurnMemo();
    this.people = new PeopleStore(store.people, clock, memo);
    this.profiles = new ProfileStore(store.profiles, clock, memo);
    this.prompts = new PromptSections({
      profiles: this.profiles,
      entries: this.entries,
      clock,
      dataDir: options.dataDir,
      snapshotChars: options.snapshotChars,
      personFor: (sessionKey, userId) => this.personFor(sessionKey, userId),
      timezoneFor: (personId) => this.timezoneFor(personId),
    });
    this.retryDelayMs = options.retryDelayMs ?? 5000;
    ensurePersona(options.dataDir);
    const wantsVectors = Boolean(options.embeddings || options.embedder);
    // Vectors written earlier must still be deletable after embeddings are switched off.
    if (wantsVectors || store.hasVectors()) {
      const support = store.vectorSupport();
      if (support.mode === 'none') this.semanticProblem = support.problem;
      else this.vectors = store.vectors();
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
      const job = this.options.store.jobs.get(sessionKey.slice('job:'.length));
      if (job) return job.ownerId;
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

  /** The person's profile and entries within the snapshot budget (see PromptSections.snapshot). */
  snapshot(personId: string, maxChars?: number): string {
    return this.prompts.snapshot(personId, maxChars);
  }

  /** The system prompt's memory part for one session (see PromptSections.section). */
  promptSection(context: PromptContext): string {
    return this.prompts.section(context);
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
        this.options.store.transaction(() => {
          batch.forEach((item, index) => {
            // Forgotten while its vector was on the way: nothing to store.
            if (!this.entries.bySeq(item.seq)) return;
            vectors.put(item.seq, item.personId, embedded[index] as Float32Array);
            this.entries.markEmbedded(item.seq);
          });
        });
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
