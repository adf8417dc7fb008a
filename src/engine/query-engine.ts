import type { AgentEvent } from '../core/events.js';
import { addUsage, emptyUsage, text, toolUses, type Block, type Message, type Usage } from '../core/messages.js';
import { platformOf, unlinkedPeople, type PersonResolver } from '../core/person.js';
import type { CompactionResult, CompactionTrigger } from './compaction/compactor.js';
import type { TokenCalibrations } from './compaction/calibration.js';
import { ContextKeeper, type Prompt } from './context-keeper.js';
import type { ModelWindow } from './model-window.js';
import { WorkingMemory } from './working-memory.js';
import { cancelledResult } from './tool-execution.js';
import { SHUTDOWN_REASON } from '../core/shutdown.js';
import type { Interaction } from '../policy/types.js';
import type { ProviderClient } from '../providers/types.js';
import type { ConversationRepository, SessionRow } from '../store/conversations.js';
import type { ToolContext, ToolRegistry } from '../tools/tool.js';
import type { HookGate, PermissionGate } from './ports.js';
import { pendingWork } from './pending-work.js';
import { runQuery, type Compacted } from './run-query.js';

/** What every engine of one hob process shares. */
export type EngineDeps = {
  provider: ProviderClient;
  tools: ToolRegistry;
  permissions: PermissionGate;
  hooks: HookGate;
  conversations: ConversationRepository;
  /** Built once per submitted message (carries the current time); leaner for a small `contextWindow`. */
  systemPrompt(context: { sessionKey: string; userId: string; interactive: boolean; sessionId: string; chatType?: SubmitOptions['chatType']; contextWindow: number }): string;
  /** When given, each message from the person is stored starting with `[<sentAt()>]` (in their timezone). */
  sentAt?(context: { sessionKey: string; userId: string }): string;
  /** Sees each message the person sends (memory's fact extraction); must not throw or block. */
  observe?(context: { sessionKey: string; userId: string }, text: string): void;
  costUsd(model: string, usage: Usage): number;
  workspace: string;
  maxTurns: number;
  maxTokens: number;
  approvalTimeoutSeconds: number;
  /** `model.context_window`; without it, `windows` or the known window of the model in use. */
  contextWindow?: number;
  /** Each model's window, asked of its server once (shared by every conversation). */
  windows?: ModelWindow;
  /** Each model's token-count calibration (shared, and kept when it has a store). */
  calibrations?: TokenCalibrations;
  /** Head room kept below the window besides max_tokens; default min(13,000, window / 10). */
  compactionBufferTokens?: number;
  /** Who a platform identity belongs to: sessions and their search are the person's. */
  people?: PersonResolver;
};

type AppendOptions = { run?: 'starts' | 'ends'; personId?: string; workingMemory?: string };

/** The closing note of a run the person stopped; the next message starts a new turn. */
export const STOPPED_NOTE = '[The person stopped this run before it finished. Do not resume it unless they ask again.]';

/** Text that arrived while the run was busy, framed so the model knows it came mid-run. */
export const frameSteered = (line: string): string => `[Sent while you were working] ${line}`;

export type SubmitOptions = {
  userId: string;
  interaction: Interaction;
  signal: AbortSignal;
  /** False for headless runs: the prompt then says nobody can approve. */
  interactive?: boolean;
  sendFile?: ToolContext['sendFile'];
  /** Where the message came from: a group gets no personal memory snapshot when shared. */
  chatType?: 'dm' | 'group' | 'channel';
  /** The conversation is a group chat (tools then keep the person's private data out). */
  inGroup?: boolean;
};

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

/**
 * One conversation: its history (rebuilt from the store), usage totals and the single run
 * in flight. Every completed message is appended to the store as it happens, so a crash
 * loses at most the message being streamed.
 */
export class QueryEngine {
  // Set by open(), from the constructor on.
  private session!: SessionRow;
  private history!: Message[];
  private usage!: Usage;
  private cost!: number;
  private requests!: number;
  private steering: string[] = [];
  private running = false;
  private workingMemory!: WorkingMemory;
  private readonly context: ContextKeeper;

  constructor(
    readonly sessionKey: string,
    private readonly deps: EngineDeps,
  ) {
    this.context = new ContextKeeper({
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
    this.open(deps.conversations.activeSession(sessionKey));
  }

  /** Makes a stored session the current one: its history, usage totals and working memory. */
  private open(row: SessionRow): void {
    this.session = row;
    this.history = this.deps.conversations.loadMessages(row.id);
    const totals = this.deps.conversations.usageTotals(row.id);
    this.usage = totals;
    this.cost = totals.costUsd;
    this.requests = totals.requests;
    this.steering = [];
    this.workingMemory = WorkingMemory.fromJSON(this.deps.conversations.workingMemory(row.id));
    this.context.forget();
  }

  /**
   * Working memory: task focus, files in play, recent steps, verified work. Filled after each
   * tool call, saved with the session, carried across compaction.
   */
  get metadata(): WorkingMemory {
    return this.workingMemory;
  }

  get messages(): readonly Message[] {
    return this.history;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Runs the agent on a new user message. One run at a time per conversation. */
  async *submit(content: string | Block[], options: SubmitOptions): AsyncGenerator<AgentEvent> {
    const given = typeof content === 'string' ? [text(content)] : content;
    const who = { sessionKey: this.sessionKey, userId: options.userId };
    const blocks = this.deps.sentAt ? [text(`[${this.deps.sentAt(who)}]`), ...given] : given;
    const firstOfSession = this.history.length === 0;
    const personId = this.personOf(options.userId);
    const said = given.flatMap((block) => (block.type === 'text' ? [block.text] : []));
    this.workingMemory.rememberGoal(said.join(' '));
    const pending = pendingWork(this.history);
    // The message is stored together with the session's running mark: from here on, a crash resumes this run.
    if (pending.kind === 'unanswered_tools') this.append({ role: 'user', content: pending.results }, { run: 'starts' });
    if (pending.kind !== 'none' && this.history.at(-1)?.role === 'user') {
      // Roles must alternate: fold the new text into the last user message.
      const last = this.history.at(-1) as Message;
      last.content.push(...blocks);
      this.deps.conversations.appendMessage(this.session.id, { role: 'user', content: blocks }, { run: 'starts', personId, workingMemory: this.workingMemory.toJSON() });
    } else {
      this.append({ role: 'user', content: blocks }, { run: 'starts', personId, workingMemory: this.workingMemory.toJSON() });
    }
    this.deps.observe?.(who, said.join('\n'));
    // After the message is stored (callers count on that happening synchronously).
    if (firstOfSession) {
      await this.deps.hooks.run('session_start', { session_key: this.sessionKey, session_id: this.session.id, user_id: options.userId }, options.signal);
    }
    yield* this.run(options);
  }

  /**
   * Resumes a tool loop that a crash or restart cut off: answers tool calls that never got a
   * result (saying so, since they may or may not have run) and lets the model continue.
   * Yields nothing when there is nothing to resume.
   */
  async *continuePending(options: SubmitOptions, notStarted: ReadonlySet<string> = new Set()): AsyncGenerator<AgentEvent> {
    if (!this.deps.conversations.isRunning(this.session.id)) return;
    const pending = pendingWork(this.history, notStarted);
    if (pending.kind === 'none') return;
    if (pending.kind === 'unanswered_tools') this.append({ role: 'user', content: pending.results });
    yield* this.run(options);
  }

  /**
   * Whether a crash or shutdown cut the last run off: it was still marked running and the
   * history ends mid-run. A run the person stopped, or one that hit the turn limit or an
   * error, ended: it does not resume by itself.
   */
  hasPendingWork(): boolean {
    return this.deps.conversations.isRunning(this.session.id) && pendingWork(this.history).kind !== 'none';
  }

  /** Text that arrived during a run; the loop injects it at the next tool boundary. */
  steer(line: string): void {
    this.steering.push(line);
  }

  /** How many steered lines the loop has not read yet. */
  get pendingSteering(): number {
    return this.steering.length;
  }

  /** Steered text the last run ended without reading; the caller turns it into a new message. */
  takeSteering(): string[] {
    return this.steering.splice(0);
  }

  /** Starts a fresh session for this conversation; the old one stays in the store. */
  reset(): void {
    // Hooks never throw; the new session does not wait for this one's end hook.
    void this.deps.hooks.run('session_end', { session_key: this.sessionKey, session_id: this.session.id, messages: this.history.length });
    this.session = this.deps.conversations.startSession(this.sessionKey);
    this.history = [];
    this.usage = emptyUsage();
    this.cost = 0;
    this.requests = 0;
    this.steering = [];
    this.workingMemory = new WorkingMemory();
    this.context.forget();
  }

  /** The latest compaction of this conversation (benchmarks and tests read it). */
  get lastCompaction(): ContextKeeper['last'] {
    return this.context.last;
  }

  /**
   * Reopens one of the person's earlier sessions (`/resume`): its history from its latest
   * compaction boundary, its usage and its working memory. False when it is not theirs.
   */
  resume(sessionId: string, userId: string): boolean {
    if (this.running) return false;
    const row = this.deps.conversations.reopenSession(this.sessionKey, sessionId, this.personOf(userId));
    if (!row) return false;
    this.open(row);
    return true;
  }

  /** `/compact`: compacts now, as far as it can. Answers in one sentence for the person. */
  async compactNow(userId: string): Promise<string> {
    if (this.running) return 'I am busy with a run; /compact again when it has finished.';
    if (this.history.length < 2) return 'There is nothing to compact yet.';
    const system = this.deps.systemPrompt({ sessionKey: this.sessionKey, userId, interactive: true, sessionId: this.session.id, contextWindow: (await this.context.window()).tokens });
    const compacted = await this.compactWith({ system, messages: this.history }, 'manual', this.session, this.history);
    if (this.context.lastError) return `I could not compact the conversation (${this.context.lastError}). It is unchanged.`;
    if (!compacted?.notice) return 'Nothing to compact: the conversation is already short.';
    return `Compacted the conversation (level ${compacted.notice.level}): about ${compacted.notice.tokensBefore.toLocaleString('en-US')} → ${compacted.notice.tokensAfter.toLocaleString('en-US')} tokens. The full record stays searchable.`;
  }

  status(): EngineStatus {
    return {
      sessionKey: this.sessionKey,
      sessionId: this.session.id,
      model: this.deps.provider.model,
      messages: this.history.length,
      usage: this.usage,
      costUsd: this.cost,
      requests: this.requests,
      running: this.running,
    };
  }

  private async *run(options: SubmitOptions): AsyncGenerator<AgentEvent> {
    if (this.running) throw new Error(`conversation ${this.sessionKey} is already running`);
    this.running = true;
    let settled = false;
    // The run writes to the session it started in, even if /new starts another meanwhile.
    const session = this.session;
    const history = this.history;
    const interactive = options.interactive ?? true;
    const { tokens: contextWindow } = await this.context.window();
    const system = this.deps.systemPrompt({ sessionKey: this.sessionKey, userId: options.userId, interactive, sessionId: session.id, chatType: options.chatType, contextWindow });
    const personId = this.personOf(options.userId);
    /** What the model wrote since its last complete message: kept when the person stops the run. */
    let partial = '';
    try {
      const events = runQuery({
        provider: this.deps.provider,
        system,
        messages: history,
        tools: this.deps.tools,
        permissions: this.deps.permissions,
        hooks: this.deps.hooks,
        maxTurns: this.deps.maxTurns,
        maxTokens: this.deps.maxTokens,
        approvalTimeoutSeconds: this.deps.approvalTimeoutSeconds,
        drainSteering: () => this.steering.splice(0).map(frameSteered),
        beforeRequest: (messages) => this.context.beforeRequest({ system, messages }, () => this.workingMemory.render(), (result, trigger) => this.storeCompaction(session, history, result, trigger), options.signal),
        onPromptTooLong: (messages, error) => this.context.onPromptTooLong({ system, messages }, error, this.workingMemory.render(), (result, trigger) => this.storeCompaction(session, history, result, trigger), options.signal),
        context: {
          signal: options.signal,
          isSensitivePath: (path, resolved) => this.deps.permissions.isSensitivePath?.(path, resolved) ?? false,
          workspace: this.deps.workspace,
          sessionKey: this.sessionKey,
          userId: options.userId,
          interaction: options.interaction,
          sendFile: options.sendFile,
          ...(options.inGroup ? { inGroup: true } : {}),
        },
      });
      for await (const event of events) {
        if (event.type === 'text_delta') partial += event.text;
        if (event.type === 'assistant_message') partial = '';
        if (event.type === 'assistant_message' && toolUses(event.message).length === 0) {
          // The answer: the run ends with it, so the running mark clears in the same write.
          this.appendTo(session, history, event.message, { run: 'ends', personId });
          settled = true;
        } else if (event.type === 'assistant_message' || event.type === 'user_message') {
          const remembered = event.type === 'user_message' && this.rememberToolResults(session, history, event.message);
          // Working memory is saved in the same write as the tool results that filled it.
          this.appendTo(session, history, event.message, { personId, ...(remembered ? { workingMemory: this.workingMemory.toJSON() } : {}) });
        }
        if (event.type === 'usage') {
          // The request was the history as it stands before the answer is appended.
          if (session === this.session) this.context.observe(event.usage, history, system);
          this.recordUsage(session, event.model, event.usage);
        }
        yield event;
      }
    } finally {
      this.running = false;
      if (!settled && options.signal.aborted && options.signal.reason !== SHUTDOWN_REASON) {
        settled = this.closeStopped(session, history, partial, personId);
      }
      // Stopped for a shutdown: left marked, so the next start picks it up.
      if (!settled && !(options.signal.aborted && options.signal.reason === SHUTDOWN_REASON)) this.settle(session);
    }
  }

  /**
   * A run the person stopped is closed in the history: what the model had written is kept as
   * its answer, with a note that the person stopped it, so the next message is a new turn and
   * the model does not take the stopped work up again (also after a restart).
   */
  private closeStopped(session: SessionRow, history: Message[], partial: string, personId: string): boolean {
    try {
      const last = history.at(-1);
      if (!last) return false;
      if (last.role === 'assistant') {
        const calls = toolUses(last);
        if (calls.length === 0) return false;
        this.appendTo(session, history, { role: 'user', content: calls.map((call) => cancelledResult(call)) });
      }
      const said = partial.trim();
      this.appendTo(session, history, { role: 'assistant', content: [text(said ? `${said}\n\n${STOPPED_NOTE}` : STOPPED_NOTE)] }, { run: 'ends', personId });
      return true;
    } catch {
      return false; // the store is gone (hob is closing)
    }
  }

  /** After tool calls: their files, steps and verified work go into working memory. True when it changed. */
  private rememberToolResults(session: SessionRow, history: Message[], message: Message): boolean {
    const asked = history.at(-1);
    if (!asked || asked.role !== 'assistant' || session !== this.session) return false;
    const calls = new Map(toolUses(asked).map((call) => [call.id, call]));
    for (const block of message.content) {
      const call = block.type === 'tool_result' ? calls.get(block.toolUseId) : undefined;
      if (call && block.type === 'tool_result') this.workingMemory.recordTool(call.name, call.input, { content: block.content, isError: block.isError });
    }
    return calls.size > 0;
  }

  /** Compacts now (reactive or manual); the boundary is recorded as it happens. Never throws. */
  private compactWith(prompt: Prompt, trigger: CompactionTrigger, session: SessionRow, history: Message[], signal?: AbortSignal): Promise<Compacted | undefined> {
    return this.context.compact(prompt, trigger, this.workingMemory.render(), (result, trigger) => this.storeCompaction(session, history, result, trigger), signal);
  }

  /** A compaction adds one boundary row (the messages stay as written) and replaces the history the engine holds. */
  private storeCompaction(session: SessionRow, history: Message[], result: CompactionResult, trigger: CompactionTrigger): void {
    this.deps.conversations.saveBoundary(session.id, result.messages, { trigger, level: result.level, tokensBefore: result.tokensBefore, tokensAfter: result.tokensAfter });
    history.splice(0, history.length, ...result.messages);
  }

  private personOf(userId: string): string {
    return (this.deps.people ?? unlinkedPeople).personId(platformOf(this.sessionKey), userId);
  }

  /** The run ended (answered, stopped by the person, turn limit, error): nothing to resume. */
  private settle(session: SessionRow): void {
    try {
      this.deps.conversations.setRunning(session.id, false);
    } catch {
      // The store is gone (hob is closing); the next start sees the run as cut off and resumes it.
    }
  }

  private append(message: Message, options: AppendOptions = {}): void {
    this.appendTo(this.session, this.history, message, options);
  }

  private appendTo(session: SessionRow, history: Message[], message: Message, options: AppendOptions = {}): void {
    history.push(message);
    this.deps.conversations.appendMessage(session.id, message, options);
  }

  /** Usage counts toward the session it was spent in; the totals shown are the current session's. */
  private recordUsage(session: SessionRow, model: string, usage: Usage): void {
    const cost = this.deps.costUsd(model, usage);
    if (session === this.session) {
      this.usage = addUsage(this.usage, usage);
      this.cost += cost;
      this.requests += 1;
    }
    this.deps.conversations.recordUsage(session.id, model, usage, cost);
  }
}
