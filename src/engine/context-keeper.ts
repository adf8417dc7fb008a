/**
 * Keeps one conversation's prompt inside the model's window: knows the prompt's size (the
 * provider's last count plus an estimate of what was added), decides when to compact, runs
 * the compactor, and remembers the outcome. The engine owns the history; `onCompacted` lets
 * it record the boundary and replace what it holds.
 */
import type { Message, Usage } from '../core/messages.js';
import type { ProviderClient } from '../providers/types.js';
import type { ToolRegistry } from '../tools/tool.js';
import { Compactor, defaultBuffer, type CompactionResult, type CompactionTrigger } from './compaction/compactor.js';
import { contextWindowFor, loadTokenizer, PromptSizer, tokenizerLoaded } from './compaction/tokens.js';
import type { HookGate } from './ports.js';
import type { Compacted } from './run-query.js';

export type ContextKeeperDeps = {
  provider(): ProviderClient;
  hooks: HookGate;
  tools: ToolRegistry;
  sessionKey: string;
  /** `model.context_window`; without it, the known window of the model in use. */
  contextWindow?: number;
  bufferTokens?: number;
  maxTokens: number;
};

export type Prompt = { system: string; messages: readonly Message[] };

export class ContextKeeper {
  private readonly sizer = new PromptSizer();
  private readonly compactor: Compactor;
  /** The latest compaction (benchmarks and tests read it). */
  last: (CompactionResult & { trigger: CompactionTrigger; ms: number }) | undefined;
  /** Why the latest attempt failed, if it did. */
  lastError: string | undefined;

  constructor(private readonly deps: ContextKeeperDeps) {
    this.compactor = new Compactor({
      provider: deps.provider,
      hooks: deps.hooks,
      settings: () => {
        const contextWindow = contextWindowFor(deps.provider().model, deps.contextWindow);
        return { contextWindow, maxTokens: deps.maxTokens, bufferTokens: deps.bufferTokens ?? defaultBuffer(contextWindow) };
      },
    });
  }

  /** The provider's count of a request and the history it was sent with. */
  observe(usage: Usage, sent: readonly Message[], system: string): void {
    this.sizer.observe(usage, sent, { system, tools: this.deps.tools.specs() });
  }

  /** A new or reopened session: the last count says nothing about it. */
  forget(): void {
    this.sizer.reset();
    this.last = undefined;
  }

  /** Before a request: compacts when the prompt would not fit (unless the circuit breaker is open). `carried` is rendered only then. */
  async beforeRequest(prompt: Prompt, carried: () => string, onCompacted: (result: CompactionResult, trigger: CompactionTrigger) => void, signal?: AbortSignal): Promise<Compacted | undefined> {
    if (this.compactor.tripped) return undefined;
    const full = { ...prompt, tools: this.deps.tools.specs() };
    if (!tokenizerLoaded()) {
      // Until it loads the count can only be too high: far from the window, the exact one can wait.
      if (!this.compactor.needsCompaction(this.sizer.size(full))) {
        void loadTokenizer().catch(() => undefined);
        return undefined;
      }
      await loadTokenizer();
    }
    if (!this.compactor.needsCompaction(this.sizer.size(full))) return undefined;
    return this.compact(prompt, 'auto', carried(), onCompacted, signal);
  }

  /** Compacts now. Never throws: a failure leaves the history as it was and is kept in `lastError`. */
  async compact(prompt: Prompt, trigger: CompactionTrigger, carried: string, onCompacted: (result: CompactionResult, trigger: CompactionTrigger) => void, signal?: AbortSignal): Promise<Compacted | undefined> {
    const started = performance.now();
    this.lastError = undefined;
    try {
      const result = await this.compactor.compact({ ...prompt, tools: this.deps.tools.specs() }, { trigger, carried, sessionKey: this.deps.sessionKey, signal });
      if (!result) return undefined;
      onCompacted(result, trigger);
      this.sizer.reset();
      this.last = { ...result, trigger, ms: performance.now() - started };
      return { messages: result.messages, notice: { type: 'compaction', level: result.level, tokensBefore: result.tokensBefore, tokensAfter: result.tokensAfter } };
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
      return undefined;
    }
  }
}
