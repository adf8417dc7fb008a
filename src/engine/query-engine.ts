import type { AgentEvent } from '../core/events.js';
import { addUsage, emptyUsage, text, toolUses, type Block, type Message, type ToolResultBlock, type Usage } from '../core/messages.js';
import { SHUTDOWN_REASON } from '../core/shutdown.js';
import type { Interaction } from '../policy/types.js';
import type { ProviderClient } from '../providers/types.js';
import type { ConversationRepository, SessionRow } from '../store/conversations.js';
import type { ToolContext, ToolRegistry } from '../tools/tool.js';
import type { HookGate, PermissionGate } from './ports.js';
import { runQuery } from './run-query.js';

/** What every engine of one hob process shares. */
export type EngineDeps = {
  provider: ProviderClient;
  tools: ToolRegistry;
  permissions: PermissionGate;
  hooks: HookGate;
  conversations: ConversationRepository;
  /** Built once per submitted message (carries the current time). */
  systemPrompt(context: { sessionKey: string; userId: string; interactive: boolean; sessionId: string; chatType?: SubmitOptions['chatType'] }): string;
  /** When given, each message from the person is stored starting with `[<sentAt()>]` (in their timezone). */
  sentAt?(context: { sessionKey: string; userId: string }): string;
  /** Sees each message the person sends (memory's fact extraction); must not throw or block. */
  observe?(context: { sessionKey: string; userId: string }, text: string): void;
  costUsd(model: string, usage: Usage): number;
  workspace: string;
  maxTurns: number;
  maxTokens: number;
  approvalTimeoutSeconds: number;
};

export type SubmitOptions = {
  userId: string;
  interaction: Interaction;
  signal: AbortSignal;
  /** False for headless runs: the prompt then says nobody can approve. */
  interactive?: boolean;
  sendFile?: ToolContext['sendFile'];
  /** Where the message came from: a group gets no personal memory snapshot when shared. */
  chatType?: 'dm' | 'group' | 'channel';
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
  private session: SessionRow;
  private history: Message[];
  private usage: Usage;
  private cost: number;
  private requests: number;
  private steering: string[] = [];
  private running = false;
  /** Working-memory metadata the run may keep (e.g. the files it touched). */
  readonly metadata = new Map<string, unknown>();

  constructor(
    readonly sessionKey: string,
    private readonly deps: EngineDeps,
  ) {
    this.session = deps.conversations.activeSession(sessionKey);
    this.history = deps.conversations.loadMessages(this.session.id);
    const totals = deps.conversations.usageTotals(this.session.id);
    this.usage = totals;
    this.cost = totals.costUsd;
    this.requests = totals.requests;
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
    const pending = this.pendingWork();
    // The message is stored together with the session's running mark: from here on, a crash resumes this run.
    if (pending.kind === 'unanswered_tools') this.append({ role: 'user', content: pending.results }, { run: 'starts' });
    if (pending.kind !== 'none' && this.history.at(-1)?.role === 'user') {
      // Roles must alternate: fold the new text into the last user message.
      const last = this.history.at(-1) as Message;
      last.content.push(...blocks);
      this.deps.conversations.appendMessage(this.session.id, { role: 'user', content: blocks }, { run: 'starts' });
    } else {
      this.append({ role: 'user', content: blocks }, { run: 'starts' });
    }
    this.deps.observe?.(who, given.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n'));
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
    const pending = this.pendingWork(notStarted);
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
    return this.deps.conversations.isRunning(this.session.id) && this.pendingWork().kind !== 'none';
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
    this.metadata.clear();
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
    try {
      const events = runQuery({
        provider: this.deps.provider,
        system: this.deps.systemPrompt({ sessionKey: this.sessionKey, userId: options.userId, interactive, sessionId: session.id, chatType: options.chatType }),
        messages: history,
        tools: this.deps.tools,
        permissions: this.deps.permissions,
        hooks: this.deps.hooks,
        maxTurns: this.deps.maxTurns,
        maxTokens: this.deps.maxTokens,
        approvalTimeoutSeconds: this.deps.approvalTimeoutSeconds,
        drainSteering: () => this.steering.splice(0),
        context: {
          signal: options.signal,
          isSensitivePath: (path, resolved) => this.deps.permissions.isSensitivePath?.(path, resolved) ?? false,
          workspace: this.deps.workspace,
          sessionKey: this.sessionKey,
          userId: options.userId,
          interaction: options.interaction,
          sendFile: options.sendFile,
        },
      });
      for await (const event of events) {
        if (event.type === 'assistant_message' && toolUses(event.message).length === 0) {
          // The answer: the run ends with it, so the running mark clears in the same write.
          this.appendTo(session, history, event.message, { run: 'ends' });
          settled = true;
        } else if (event.type === 'assistant_message' || event.type === 'user_message') {
          this.appendTo(session, history, event.message);
        }
        if (event.type === 'usage') this.recordUsage(session, event.model, event.usage);
        yield event;
      }
    } finally {
      this.running = false;
      // Stopped for a shutdown: left marked, so the next start picks it up.
      if (!settled && !(options.signal.aborted && options.signal.reason === SHUTDOWN_REASON)) this.settle(session);
    }
  }

  /** The run ended (answered, stopped by the person, turn limit, error): nothing to resume. */
  private settle(session: SessionRow): void {
    try {
      this.deps.conversations.setRunning(session.id, false);
    } catch {
      // The store is gone (hob is closing); the next start sees the run as cut off and resumes it.
    }
  }

  private append(message: Message, options: { run?: 'starts' | 'ends' } = {}): void {
    this.appendTo(this.session, this.history, message, options);
  }

  private appendTo(session: SessionRow, history: Message[], message: Message, options: { run?: 'starts' | 'ends' } = {}): void {
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

  private pendingWork(notStarted: ReadonlySet<string> = new Set()): { kind: 'none' } | { kind: 'user_waiting' } | { kind: 'unanswered_tools'; results: ToolResultBlock[] } {
    const last = this.history.at(-1);
    if (!last) return { kind: 'none' };
    if (last.role === 'user') return { kind: 'user_waiting' };
    const calls = toolUses(last);
    if (calls.length === 0) return { kind: 'none' };
    return {
      kind: 'unanswered_tools',
      results: calls.map((call) => ({
        type: 'tool_result',
        toolUseId: call.id,
        content: notStarted.has(call.id)
          ? 'Not run: hob restarted while this call waited for approval. Call it again if it is still needed.'
          : 'Interrupted: hob stopped before this call finished, so it may or may not have run. Check its effect before repeating it.',
        isError: true,
      })),
    };
  }
}
