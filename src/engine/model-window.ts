/**
 * The window each model runs with, in one hob process: `model.context_window` when set, the
 * known table for hosted models, else what the server says (asked once per model and kept),
 * else the default. A server that refuses a prompt and names a smaller window is believed from then on.
 */
import { staticWindow, type WindowInfo } from '../providers/context-window.js';

export type ModelWindowOptions = {
  /** `model.context_window`. */
  configured?: number;
  /** Asks the model's server (window-discovery.ts); undefined when it would not say. */
  discover?(model: string): Promise<WindowInfo | undefined>;
};

export class ModelWindow {
  private readonly resolved = new Map<string, WindowInfo>();
  private readonly pending = new Map<string, Promise<WindowInfo>>();

  constructor(private readonly options: ModelWindowOptions = {}) {}

  /** The window as far as it is known now (before discovery has answered: the static guess). */
  current(model: string): WindowInfo {
    return this.resolved.get(model) ?? staticWindow(model, this.options.configured);
  }

  /** Asks the server on first use for a model it cannot know otherwise; later calls answer at once. */
  resolve(model: string): Promise<WindowInfo> {
    const done = this.resolved.get(model);
    if (done) return Promise.resolve(done);
    let asking = this.pending.get(model);
    if (!asking) {
      asking = this.ask(model);
      this.pending.set(model, asking);
    }
    return asking;
  }

  /**
   * The server refused a prompt and said its window is `tokens`: from now on that is the window,
   * when it is smaller than the one believed (also a configured one: the server is what runs).
   */
  learn(model: string, tokens: number): void {
    const now = this.current(model);
    if (tokens >= now.tokens) return;
    this.resolved.set(model, { ...now, tokens, source: 'server', detail: 'the window the server named when it refused a prompt' });
  }

  private async ask(model: string): Promise<WindowInfo> {
    const fallback = staticWindow(model, this.options.configured);
    let found: WindowInfo | undefined;
    if (fallback.source === 'default' && this.options.discover) {
      try {
        found = await this.options.discover(model);
      } catch {
        found = undefined; // discovery never blocks a conversation
      }
    }
    const info = this.resolved.get(model) ?? found ?? fallback;
    this.resolved.set(model, info);
    this.pending.delete(model);
    return info;
  }
}
