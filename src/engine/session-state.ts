/**
 * A session's state: the stored session a conversation is on, as the engine holds it — its
 * history (from its latest compaction boundary), usage totals and working memory — and every
 * row written for it. Each change goes to the store as it happens, so a crash loses at most
 * the message being streamed, and whether a run was cut off is read back from the same rows.
 *
 * A run keeps the state it started in: when /new or /resume makes another session current,
 * the run still writes its messages, usage and closing note here, into its own session.
 *
 * The history held here is a copy of the store's rows: between runs it may be let go
 * (`release`, when the gateway holds more histories than its budget) and is read back from
 * the store the next time it is needed, exactly as the rows say.
 */
import { addUsage, emptyUsage, toolUses, type Block, type Message, type Usage } from '../core/messages.js';
import type { AppendOptions as RowOptions, ConversationRepository, SessionRow, UsageRecord, UsageTotals } from '../store/conversations.js';
import type { CompactionResult, CompactionTrigger } from './compaction/compactor.js';
import type { CompactionTarget } from './context-keeper.js';
import { pendingWork } from './pending-work.js';
import { WorkingMemory } from './working-memory.js';

/** How a message row is written: whether it starts or ends a run, whose it is, and the working memory saved with it. */
type AppendOptions = Omit<RowOptions, 'usage'>;

export class SessionState implements CompactionTarget {
  private left = false;
  /**
   * The last model request's usage, not yet stored: a request's usage comes just before the
   * message it wrote, and is stored in that message's transaction (one commit for both).
   */
  private unwritten: UsageRecord | undefined;
  private totals: { usage: Usage; costUsd: number; requests: number };
  /** The history held, or undefined while it is only in the store (not read yet, or released). */
  private held: Message[] | undefined;
  /** About what `held` takes in memory (`heldBytes`). */
  private heldSize = 0;

  private constructor(
    private readonly conversations: ConversationRepository,
    readonly row: SessionRow,
    history: Message[] | undefined,
    totals: UsageTotals,
    /**
     * Working memory: task focus, files in play, recent steps, verified work. Filled after each
     * tool call, saved with the session, carried across compaction.
     */
    readonly workingMemory: WorkingMemory,
  ) {
    this.totals = { usage: totals, costUsd: totals.costUsd, requests: totals.requests };
    if (history) this.hold(history);
  }

  /** A stored session as it was left: its usage and working memory now, its history (from its latest boundary) when first needed. */
  static open(conversations: ConversationRepository, row: SessionRow): SessionState {
    return new SessionState(conversations, row, undefined, conversations.usageTotals(row.id), WorkingMemory.fromJSON(conversations.workingMemory(row.id)));
  }

  /** A session just started: nothing said, nothing spent. */
  static fresh(conversations: ConversationRepository, row: SessionRow): SessionState {
    return new SessionState(conversations, row, [], { ...emptyUsage(), costUsd: 0, requests: 0 }, new WorkingMemory());
  }

  /** True once /new or /resume made another session current: a run still writing here no longer speaks for the conversation. */
  get superseded(): boolean {
    return this.left;
  }

  /** The conversation moved to another session; this one stays in the store as it is. */
  supersede(): void {
    this.left = true;
  }

  get id(): string {
    return this.row.id;
  }

  /** The history the model sees (from the latest boundary), read from the store when not held; a compaction replaces it in place. */
  get history(): Message[] {
    return this.held ?? this.hold(this.conversations.loadMessages(this.row.id));
  }

  /** About how much memory the held history takes (0 when it is not held): what the gateway's budget counts. */
  get heldBytes(): number {
    return this.held ? this.heldSize : 0;
  }

  /**
   * Lets the history go: the next use reads it back from the store. Only between runs (the
   * caller's to know): a run holds the array it was given.
   */
  release(): void {
    this.held = undefined;
    this.heldSize = 0;
  }

  private hold(history: Message[]): Message[] {
    this.held = history;
    this.heldSize = history.reduce((sum, message) => sum + messageBytes(message), 0);
    return history;
  }

  /** Tokens, cost and model requests spent in this session (across restarts). */
  get spent(): Readonly<{ usage: Usage; costUsd: number; requests: number }> {
    return this.totals;
  }

  /**
   * Stores the person's new message together with the session's running mark: from here on, a
   * crash resumes this run. Tool calls a crash cut off are answered first; when a message of
   * theirs is still unanswered, the new one joins it (roles must alternate).
   */
  receive(blocks: Block[], goal: string, personId: string): void {
    this.workingMemory.rememberGoal(goal);
    const pending = pendingWork(this.history);
    if (pending.kind === 'unanswered_tools') this.append({ role: 'user', content: pending.results }, { run: 'starts' });
    const options: AppendOptions = { run: 'starts', personId, workingMemory: this.workingMemory.toJSON() };
    const last = this.history.at(-1);
    if (pending.kind !== 'none' && last?.role === 'user') {
      last.content.push(...blocks);
      this.heldSize += blocks.reduce((sum, block) => sum + blockBytes(block), 0);
      this.conversations.appendMessage(this.row.id, { role: 'user', content: blocks }, this.withUsage(options));
    } else {
      this.append({ role: 'user', content: blocks }, options);
    }
  }

  /**
   * Whether a crash or shutdown cut the last run off: it was still marked running and the
   * history ends mid-run. A run the person stopped, or one that hit the turn limit or an
   * error, ended: it does not resume by itself.
   */
  hasPendingWork(): boolean {
    return this.conversations.isRunning(this.row.id) && pendingWork(this.history).kind !== 'none';
  }

  /**
   * Readies a run that a crash or restart cut off: answers the tool calls that never got a
   * result (saying so, since they may or may not have run; `notStarted` ones were still
   * waiting for an approval). False when there is nothing to resume.
   */
  prepareResume(notStarted: ReadonlySet<string>): boolean {
    if (!this.conversations.isRunning(this.row.id)) return false;
    const pending = pendingWork(this.history, notStarted);
    if (pending.kind === 'none') return false;
    if (pending.kind === 'unanswered_tools') this.append({ role: 'user', content: pending.results });
    return true;
  }

  /** Appends one message to the history and to the store. */
  append(message: Message, options: AppendOptions = {}): void {
    // Held for as long as the session is: an array grown by pushing has room for 17 blocks
    // (~150 bytes), a copy only for its own (the same blocks; a live conversation's history
    // is most of what hob's heap gains per message, `bench/profile.ts heap`).
    message.content = message.content.slice();
    this.history.push(message);
    this.heldSize += messageBytes(message);
    this.conversations.appendMessage(this.row.id, message, this.withUsage(options));
  }

  /** The row options, with the usage waiting to be stored (taken: it is stored once). */
  private withUsage(options: AppendOptions): RowOptions {
    const usage = this.unwritten;
    if (!usage) return options;
    this.unwritten = undefined;
    return { ...options, usage };
  }

  /** After tool calls: their files, steps and verified work go into working memory. True when it changed. */
  rememberToolResults(message: Message): boolean {
    const asked = this.history.at(-1);
    if (!asked || asked.role !== 'assistant') return false;
    const calls = new Map(toolUses(asked).map((call) => [call.id, call]));
    for (const block of message.content) {
      const call = block.type === 'tool_result' ? calls.get(block.toolUseId) : undefined;
      if (call && block.type === 'tool_result') this.workingMemory.recordTool(call.name, call.input, { content: block.content, isError: block.isError });
    }
    return calls.size > 0;
  }

  /**
   * One model request's usage and cost, counted toward this session at once; its row is
   * stored with the next message appended, or by `writeUsage` when the run ends without one.
   */
  recordUsage(model: string, usage: Usage, costUsd: number): void {
    this.totals = { usage: addUsage(this.totals.usage, usage), costUsd: this.totals.costUsd + costUsd, requests: this.totals.requests + 1 };
    this.writeUsage();
    this.unwritten = { model, usage, costUsd };
  }

  /** Stores the usage still waiting for a message (a run ends: nothing else will carry it). */
  writeUsage(): void {
    const waiting = this.unwritten;
    if (!waiting) return;
    this.unwritten = undefined;
    this.conversations.recordUsage(this.row.id, waiting.model, waiting.usage, waiting.costUsd);
  }

  carried(): string {
    return this.workingMemory.render();
  }

  /** A compaction adds one boundary row (the messages stay as written) and replaces the history held here. */
  recordBoundary(result: CompactionResult, trigger: CompactionTrigger): void {
    this.conversations.saveBoundary(this.row.id, result.messages, { trigger, level: result.level, tokensBefore: result.tokensBefore, tokensAfter: result.tokensAfter });
    const history = this.history;
    history.splice(0, history.length, ...result.messages);
    this.hold(history);
  }

  /** The run ended (answered, stopped by the person, turn limit, error): nothing to resume. */
  settle(): void {
    try {
      this.conversations.setRunning(this.row.id, false);
    } catch {
      // The store is gone (hob is closing); the next start sees the run as cut off and resumes it.
    }
  }
}

/**
 * Roughly what a message held in memory takes: its object and content array, each block's
 * object, its token estimate (compaction/tokens.ts keeps one per block) and its text. An
 * order of size for a budget, not an exact count.
 */
function messageBytes(message: Message): number {
  return MESSAGE_BYTES + message.content.reduce((sum, block) => sum + blockBytes(block), 0);
}

const MESSAGE_BYTES = 120;
const BLOCK_BYTES = 120;

function blockBytes(block: Block): number {
  switch (block.type) {
    case 'text':
      return BLOCK_BYTES + block.text.length;
    case 'image':
      return BLOCK_BYTES + block.data.length;
    case 'tool_use':
      return BLOCK_BYTES + block.id.length + block.name.length + (JSON.stringify(block.input ?? {})?.length ?? 0);
    case 'tool_result':
      return BLOCK_BYTES + block.toolUseId.length + block.content.length;
    case 'thinking':
      return BLOCK_BYTES + block.thinking.length + block.signature.length;
    case 'redacted_thinking':
      return BLOCK_BYTES + block.data.length;
  }
}
