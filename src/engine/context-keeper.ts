/**
 * Keeps one conversation's requests inside the model's window: knows the window (asking the
 * server once), the prompt's size (the provider's last count plus a calibrated estimate of
 * what changed), which tool definitions to send, when to compact, how many answer tokens the
 * window leaves, and what to say when a message cannot fit at all. The session owns the
 * history: each compaction lands in a `CompactionTarget`, which records the boundary and
 * replaces what it holds (compaction-handoff.ts ties the two together for a run).
 */
import type { PromptTooLongError } from '../core/errors.js';
import type { Message, Usage } from '../core/messages.js';
import type { WindowInfo } from '../providers/context-window.js';
import type { ProviderClient, ToolSpec } from '../providers/types.js';
import { MAX_TOOL_OUTPUT_CHARS, type ToolSet } from '../tools/tool.js';
import { autoCompactThreshold, defaultBuffer, fitsWindow, maxTokensFor, MIN_ANSWER_TOKENS, estimateMargin, type CompactionSettings } from './compaction/budget.js';
import { TokenCalibrations } from './compaction/calibration.js';
import { Compactor, type CompactionResult, type CompactionTrigger } from './compaction/compactor.js';
import { newestPersonMessage } from './compaction/invariants.js';
import { COMPACTED_MARK, LATEST_MARK } from './compaction/levels.js';
import { PromptSizer } from './compaction/prompt-sizer.js';
import type { PromptParts } from './compaction/tokens.js';
import { keepInWorkspace, saveMessage } from './kept-texts.js';
import { ModelWindow } from './model-window.js';
import type { HookGate } from './ports.js';
import { promptBudget, type PromptBudget } from './prompt-budget.js';
import type { Compacted, RequestPlan } from './run-query.js';
import { noRoomSentence, tooBigSentence } from './too-big.js';
import { ToolMenu } from './tool-menu.js';

export type ContextKeeperDeps = {
  provider(): ProviderClient;
  hooks: HookGate;
  tools: ToolSet;
  sessionKey: string;
  maxTokens: number;
  bufferTokens?: number;
  /** The process's windows, shared; without it `contextWindow` or the known table decides. */
  windows?: ModelWindow;
  contextWindow?: number;
  /** The process's token calibrations, shared and kept; without it this conversation learns alone. */
  calibrations?: TokenCalibrations;
  /** Where texts cut short and messages too big for the window are kept. */
  workspace?: string;
};

export type Prompt = { system: string; messages: readonly Message[] };

/** The session a compaction lands in: what it carries across, and where its boundary is recorded. */
export interface CompactionTarget {
  /** Working memory, carried into the summary. */
  carried(): string;
  /** Records the compaction (a boundary row) and replaces the history the session holds. */
  recordBoundary(result: CompactionResult, trigger: CompactionTrigger): void;
}

export class ContextKeeper {
  private readonly sizer: PromptSizer;
  private readonly compactor: Compactor;
  private readonly menu: ToolMenu;
  private readonly windows: ModelWindow;
  /** What the last request went with: its count and the reactive path need it. */
  private sent: { tools: ToolSpec[]; maxTokens: number } | undefined;
  /** The latest compaction (benchmarks and tests read it). */
  last: (CompactionResult & { trigger: CompactionTrigger; ms: number }) | undefined;
  /** Why the latest attempt failed, if it did. */
  lastError: string | undefined;

  constructor(private readonly deps: ContextKeeperDeps) {
    this.windows = deps.windows ?? new ModelWindow({ configured: deps.contextWindow });
    const calibrations = deps.calibrations ?? new TokenCalibrations();
    this.sizer = new PromptSizer((model) => calibrations.for(model));
    this.menu = new ToolMenu(deps.tools);
    this.compactor = new Compactor({ provider: deps.provider, hooks: deps.hooks, settings: () => this.settings(), keep: deps.workspace ? keepInWorkspace(deps.workspace) : undefined });
  }

  /** The window of the model in use; its server is asked the first time. */
  window(): Promise<WindowInfo> {
    return this.windows.resolve(this.model());
  }

  /** What is known of the window now, without waiting. */
  windowNow(): WindowInfo {
    return this.windows.current(this.model());
  }

  /** How lean the fixed prompt must be for this window. */
  budget(): PromptBudget {
    return promptBudget(this.windowNow().tokens);
  }

  /** The provider's count of a request and the history it was sent with. */
  observe(usage: Usage, sent: readonly Message[], system: string): void {
    const tokens = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
    if (tokens > 0) this.sizer.observe(this.model(), tokens, this.sentParts({ system, messages: sent }));
  }

  /** A new or reopened session: the last count says nothing about it. */
  forget(): void {
    this.sizer.forget();
    this.last = undefined;
  }

  /** Before a request: compacts when the prompt would not fit, then sizes max_tokens to what the window leaves. */
  async beforeRequest(prompt: Prompt, target: CompactionTarget, signal?: AbortSignal): Promise<RequestPlan> {
    await this.window();
    const parts = this.parts(prompt);
    const size = this.sizer.size(this.model(), parts);
    if (size <= autoCompactThreshold(this.settings())) return this.plan(prompt, undefined, { parts, size });
    // A message the window cannot hold even alone is answered at once: compacting would only lose the conversation.
    const tooBig = this.tooBig(parts);
    if (tooBig) return { refusal: tooBig };
    const compacted = await this.compact(prompt, 'auto', target, signal);
    return this.plan(compacted ? { ...prompt, messages: compacted.messages } : prompt, compacted);
  }

  /**
   * The provider refused the prompt as too long: believe its count (and its window, when it
   * names one), compact below that, and send again. Undefined when nothing can be shortened.
   */
  async onPromptTooLong(prompt: Prompt, error: PromptTooLongError, target: CompactionTarget, signal?: AbortSignal): Promise<RequestPlan | undefined> {
    const model = this.model();
    const { promptTokens, contextWindow } = error.figures;
    if (contextWindow) this.windows.learn(model, contextWindow);
    const full = this.sentParts(prompt);
    if (!promptTokens || !this.sizer.observe(model, promptTokens, full)) {
      // No figure. A window hob only guessed was too big: the prompt sent is an upper bound of the real one.
      const sent = this.sizer.size(model, full);
      if (!contextWindow && this.windowNow().source === 'default') this.windows.learn(model, Math.floor(sent * 0.9));
      // A known window: the prompt was at least what overflows it with the answer's room.
      const overflowing = this.windowNow().source === 'default' ? 0 : this.windowNow().tokens - (this.sent?.maxTokens ?? 0) + 1;
      this.sizer.assume(model, Math.max(Math.ceil(sent * 1.1), overflowing), full);
    }
    const compacted = await this.compact(prompt, 'reactive', target, signal);
    const plan = this.plan(compacted ? { ...prompt, messages: compacted.messages } : prompt, compacted);
    return compacted || plan.refusal ? plan : undefined;
  }

  /** Compacts now. Never throws: a failure leaves the history as it was and is kept in `lastError`. */
  async compact(prompt: Prompt, trigger: CompactionTrigger, target: CompactionTarget, signal?: AbortSignal): Promise<Compacted | undefined> {
    const started = performance.now();
    this.lastError = undefined;
    const model = this.model();
    const parts = this.parts(prompt);
    try {
      const measure = (messages: readonly Message[]) => this.sizer.size(model, { ...parts, messages });
      const textTokens = (text: string) => this.sizer.textSize(model, text);
      const result = await this.compactor.compact(parts, { trigger, carried: target.carried(), sessionKey: this.deps.sessionKey, signal, measure, textTokens });
      if (!result) return undefined;
      target.recordBoundary(result, trigger);
      this.last = { ...result, trigger, ms: performance.now() - started };
      return { messages: result.messages, notice: { type: 'compaction', level: result.level, tokensBefore: result.tokensBefore, tokensAfter: result.tokensAfter } };
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
      return undefined;
    }
  }

  private model(): string {
    return this.deps.provider().model;
  }

  private settings(): CompactionSettings {
    const contextWindow = this.windowNow().tokens;
    return { contextWindow, maxTokens: this.deps.maxTokens, bufferTokens: this.deps.bufferTokens ?? defaultBuffer(contextWindow) };
  }

  /** The prompt with the tool definitions this history gets. */
  private parts(prompt: Prompt): PromptParts {
    return { system: prompt.system, messages: prompt.messages, tools: this.menu.specs(this.budget(), prompt.messages) };
  }

  /** The prompt as the last request carried it (its tool definitions as sent). */
  private sentParts(prompt: Prompt): PromptParts {
    return this.sent ? { system: prompt.system, messages: prompt.messages, tools: this.sent.tools } : this.parts(prompt);
  }

  /** The request to send: its tools and max_tokens; or, when it cannot fit, the sentence that answers instead. */
  private plan(prompt: Prompt, compacted?: Compacted, known?: { parts: PromptParts; size: number }): RequestPlan {
    const parts = known?.parts ?? this.parts(prompt);
    const window = this.windowNow().tokens;
    const size = known?.size ?? this.sizer.size(this.model(), parts);
    if (!fitsWindow(window, size)) return { ...compacted, refusal: this.refusal(parts, window) };
    const maxTokens = maxTokensFor(window, size, this.deps.maxTokens);
    this.sent = { tools: parts.tools as ToolSpec[], maxTokens };
    // A small window holds less of a tool's output: about a quarter of it (some four characters a token).
    const toolOutputChars = Math.min(MAX_TOOL_OUTPUT_CHARS, Math.max(2_000, window));
    return { ...compacted, tools: parts.tools as ToolSpec[], maxTokens, toolOutputChars, promptTokens: size };
  }

  private refusal(parts: PromptParts, window: number): string {
    return this.tooBig(parts) ?? noRoomSentence(window);
  }

  /** The sentence for a newest message that cannot fit with the fixed prompt and a minimal answer (it is kept in the workspace); else undefined. */
  private tooBig(parts: PromptParts): string | undefined {
    const model = this.model();
    const window = this.windowNow().tokens;
    const newest = newestPersonMessage(parts.messages);
    if (!newest) return undefined;
    // Only the person's own blocks: after a compaction the summary shares their message.
    const own = newest.content.filter((block) => block.type !== 'text' || !(block.text.startsWith(COMPACTED_MARK) || block.text === LATEST_MARK));
    const messageTokens = this.sizer.messagesSize(model, [{ ...newest, content: own }]);
    const fixed = this.sizer.size(model, { ...parts, messages: [] });
    const room = window - fixed - MIN_ANSWER_TOKENS - estimateMargin(fixed + messageTokens);
    if (messageTokens <= room) return undefined;
    const said = own.flatMap((block) => (block.type === 'text' && !/^\[[^\]]*\]$/.test(block.text) ? [block.text] : [])).join('\n');
    const savedAs = this.deps.workspace ? saveMessage(this.deps.workspace, said) : undefined;
    return tooBigSentence({ messageTokens, contextWindow: window, room, savedAs });
  }
}
