/**
 * QueryEngine: one conversation, as the gateway, the CLI and the scheduler see it. It holds
 * the session the conversation is on (session-state.ts), the single run in flight
 * (session-run.ts), the text steered into that run, and the context keeper that keeps its
 * requests inside the model's window (compaction-handoff.ts). Each method is a door to one
 * of those; the agent loop itself is run-query.ts.
 */
import type { AgentEvent } from '../core/events.js';
import { text, type Block, type Message, type Usage } from '../core/messages.js';
import { platformOf, unlinkedPeople } from '../core/person.js';
import { compactNow } from './compaction-handoff.js';
import { ContextKeeper } from './context-keeper.js';
import type { EngineDeps, SubmitOptions } from './engine-deps.js';
import { runSession, SteeringInbox } from './session-run.js';
import { SessionState } from './session-state.js';
import type { WorkingMemory } from './working-memory.js';

export type { EngineDeps, RunProfile, SubmitOptions } from './engine-deps.js';
export { frameSteered, STOPPED_NOTE } from './session-run.js';

export type EngineStatus = {
  sessionKey: string;
  sessionId: string;
  model: string;
  messages: number;
  usage: Usage;
  costUsd: number;
  requests: number;
  running: boolean;
};

export class QueryEngine {
  private state: SessionState;
  private running = false;
  private readonly steering = new SteeringInbox();
  private readonly keeper: ContextKeeper;

  constructor(
    readonly sessionKey: string,
    private readonly deps: EngineDeps,
  ) {
    this.keeper = new ContextKeeper({
      provider: () => this.deps.provider,
      hooks: deps.hooks,
      tools: deps.tools,
      sessionKey,
      contextWindow: deps.contextWindow,
      windows: deps.windows,
      calibrations: deps.calibrations,
      workspace: deps.workspace,
      bufferTokens: deps.compactionBufferTokens,
      maxTokens: deps.maxTokens,
    });
    const row = deps.conversations.activeSession(sessionKey);
    // A session started just now holds nothing: a new person's first message reads no history.
    this.state = row.started ? SessionState.fresh(deps.conversations, row) : SessionState.open(deps.conversations, row);
  }

  /**
   * Working memory: task focus, files in play, recent steps, verified work. Filled after each
   * tool call, saved with the session, carried across compaction.
   */
  get metadata(): WorkingMemory {
    return this.state.workingMemory;
  }

  get messages(): readonly Message[] {
    return this.state.history;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** About how much memory the history held between runs takes (0 when it is only in the store). */
  get heldBytes(): number {
    return this.state.heldBytes;
  }

  /** Lets the held history go until the next message reads it back from the store. Not during a run: false then. */
  releaseHistory(): boolean {
    if (this.running) return false;
    this.state.release();
    return true;
  }

  /** Runs the agent on a new user message. One run at a time per conversation. */
  async *submit(content: string | Block[], options: SubmitOptions): AsyncGenerator<AgentEvent> {
    const given = typeof content === 'string' ? [text(content)] : content;
    const who = { sessionKey: this.sessionKey, userId: options.userId };
    const notes = this.deps.notes?.(this.sessionKey);
    const stamped = this.deps.sentAt ? [text(`[${this.deps.sentAt(who)}]`), ...given] : given;
    const blocks = notes?.texts.length ? [...notes.texts.map((note) => text(note)), ...stamped] : stamped;
    const firstOfSession = this.state.history.length === 0;
    const said = given.flatMap((block) => (block.type === 'text' ? [block.text] : []));
    this.state.receive(blocks, said.join(' '), this.personOf(options.userId));
    notes?.taken();
    this.deps.observe?.(who, said.join('\n'));
    // After the message is stored (callers count on that happening synchronously).
    if (firstOfSession) {
      await this.deps.hooks.run('session_start', { session_key: this.sessionKey, session_id: this.state.id, user_id: options.userId }, options.signal);
    }
    yield* this.run(options);
  }

  /**
   * Resumes a tool loop that a crash or restart cut off: answers tool calls that never got a
   * result (saying so, since they may or may not have run) and lets the model continue.
   * Yields nothing when there is nothing to resume.
   */
  async *continuePending(options: SubmitOptions, notStarted: ReadonlySet<string> = new Set()): AsyncGenerator<AgentEvent> {
    if (this.state.prepareResume(notStarted)) yield* this.run(options);
  }

  /** Whether a crash or shutdown cut the last run off (a run that ended does not resume by itself). */
  hasPendingWork(): boolean {
    return this.state.hasPendingWork();
  }

  /** Text that arrived during a run; the loop injects it at the next tool boundary. */
  steer(line: string): void {
    this.steering.push(line);
  }

  /** How many steered lines the loop has not read yet. */
  get pendingSteering(): number {
    return this.steering.pending;
  }

  /** Steered text the last run ended without reading; the caller turns it into a new message. */
  takeSteering(): string[] {
    return this.steering.take();
  }

  /** Starts a fresh session for this conversation; the old one stays in the store. */
  reset(): void {
    // Hooks never throw; the new session does not wait for this one's end hook.
    void this.deps.hooks.run('session_end', { session_key: this.sessionKey, session_id: this.state.id, messages: this.state.history.length });
    this.switchTo(SessionState.fresh(this.deps.conversations, this.deps.conversations.startSession(this.sessionKey)));
  }

  /** The latest compaction of this conversation (benchmarks and tests read it). */
  get lastCompaction(): ContextKeeper['last'] {
    return this.keeper.last;
  }

  /**
   * Reopens one of the person's earlier sessions (`/resume`): its history from its latest
   * compaction boundary, its usage and its working memory. False when it is not theirs.
   */
  resume(sessionId: string, userId: string): boolean {
    if (this.running) return false;
    const row = this.deps.conversations.reopenSession(this.sessionKey, sessionId, this.personOf(userId));
    if (!row) return false;
    this.switchTo(SessionState.open(this.deps.conversations, row));
    return true;
  }

  /** `/compact`: compacts now, as far as it can. Answers in one sentence for the person. */
  async compactNow(userId: string): Promise<string> {
    if (this.running) return 'I am busy with a run; /compact again when it has finished.';
    const state = this.state;
    return compactNow(this.keeper, state, (contextWindow) => this.deps.systemPrompt({ sessionKey: this.sessionKey, userId, interactive: true, sessionId: state.id, contextWindow }));
  }

  status(): EngineStatus {
    const { usage, costUsd, requests } = this.state.spent;
    return {
      sessionKey: this.sessionKey,
      sessionId: this.state.id,
      model: this.deps.provider.model,
      messages: this.state.history.length,
      usage,
      costUsd,
      requests,
      running: this.running,
    };
  }

  private async *run(options: SubmitOptions): AsyncGenerator<AgentEvent> {
    if (this.running) throw new Error(`conversation ${this.sessionKey} is already running`);
    this.running = true;
    try {
      const run = { sessionKey: this.sessionKey, state: this.state, personId: this.personOf(options.userId), keeper: this.keeper, steering: this.steering, options };
      yield* runSession(this.deps, run);
    } finally {
      this.running = false;
    }
  }

  /** Makes another session the conversation's: a run still writing to the old one keeps to it. */
  private switchTo(state: SessionState): void {
    this.state.supersede();
    this.state = state;
    this.steering.take();
    this.keeper.forget();
  }

  private personOf(userId: string): string {
    return (this.deps.people ?? unlinkedPeople).personId(platformOf(this.sessionKey), userId);
  }
}
