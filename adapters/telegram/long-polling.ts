/**
 * Updates by long polling (@grammyjs/runner, handled concurrently). The runner gives up only
 * on 401 and 409 (another instance polls the same token): polling then restarts after a
 * pause. On stop, Telegram is told which updates were handled, so a restart does not
 * redeliver them.
 */
import { run, type RunnerHandle } from '@grammyjs/runner';
import { GrammyError, type Bot, type Middleware, type Transformer } from 'grammy';
import type { Update } from 'grammy/types';
import type { TelegramLogger } from './logger.js';
import { describeError } from './outbound.js';

/** The kinds of update hob asks Telegram for. */
export type UpdateKinds = ReadonlyArray<Exclude<keyof Update, 'update_id'>>;

export class LongPolling {
  private runner: RunnerHandle | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private lastUpdateId: number | undefined;
  private conflictTold = false;
  /** The 409 sentence while another poller holds the bot; cleared by the next poll Telegram answers. */
  conflict: string | undefined;

  constructor(
    private readonly bot: Bot,
    private readonly logger: TelegramLogger,
    private readonly allowedUpdates: UpdateKinds,
    /** Pause before polling again after polling stopped on an unrecoverable error (401, 409). */
    private readonly restartDelayMs: number,
    /** Told once, in words naming the fix, when Telegram says another process polls this bot. */
    private readonly notice: (sentence: string) => void = () => {},
  ) {}

  /** Middleware, first in line: notes the newest update handed to the handlers. */
  readonly track: Middleware = (ctx, next) => {
    this.lastUpdateId = Math.max(this.lastUpdateId ?? 0, ctx.update.update_id);
    return next();
  };

  start(): void {
    const runner = run(this.bot, {
      // Fetch errors are logged by pollFailureLogger; retries grow by 100 ms per failure.
      runner: { fetch: { allowed_updates: this.allowedUpdates }, silent: true, retryInterval: 'quadratic' },
    });
    this.runner = runner;
    runner.task()?.catch((error: unknown) => {
      if (this.runner !== runner) return;
      const conflict = conflictSentence(error);
      this.conflict = conflict;
      if (conflict) {
        this.logger.error({ method: 'getUpdates', ...describeError(error), restartInMs: this.restartDelayMs }, conflict);
        if (!this.conflictTold) this.notice(conflict);
        this.conflictTold = true;
      } else this.logger.error({ method: 'getUpdates', ...describeError(error), restartInMs: this.restartDelayMs }, 'telegram polling stopped; restarting');
      this.restartTimer = setTimeout(() => {
        this.restartTimer = undefined;
        if (this.runner === runner) this.start();
      }, this.restartDelayMs);
    });
  }

  /** Stops polling, waits for the handlers still running (they only enqueue), and confirms what they handled. */
  async stop(): Promise<void> {
    clearTimeout(this.restartTimer);
    const runner = this.runner;
    this.runner = undefined;
    await runner?.stop();
    if (runner) await this.confirmHandledUpdates();
  }

  /** Tells Telegram the updates handed to the sink are done, so a restart does not redeliver them. */
  private async confirmHandledUpdates(): Promise<void> {
    if (this.lastUpdateId === undefined) return;
    try {
      await this.bot.api.getUpdates({ offset: this.lastUpdateId + 1, limit: 1, timeout: 0 });
    } catch (error) {
      // The gateway dedupes by updateId, so a redelivery after restart is harmless.
      this.logger.warn({ method: 'getUpdates', ...describeError(error) }, 'telegram could not confirm handled updates');
    }
  }
}

/**
 * What to tell the person running hob when getUpdates answered 409: Telegram serves one
 * poller per bot and cuts off the older one, or refuses polling while a webhook is set.
 * Undefined for any other failure.
 */
export function conflictSentence(error: unknown): string | undefined {
  if (!(error instanceof GrammyError) || error.error_code !== 409) return undefined;
  if (/webhook is active/i.test(error.description)) {
    return 'Telegram refuses long polling while a webhook is set for this bot (409 Conflict): another hob process runs it in webhook mode. Give every process the same channels.telegram.webhook section.';
  }
  return 'Telegram cut off this long poll (409 Conflict): another process polls the same bot, and Telegram serves one poller per bot. Stop the other process, or run every process in webhook mode (channels.telegram.webhook) behind your load balancer.';
}

/** An API transformer that logs a failed long poll (never one aborted on purpose); `onPolled` hears of each answered one. */
export function pollFailureLogger(logger: TelegramLogger, onPolled: () => void = () => {}): Transformer {
  return async (prev, method, payload, signal) => {
    const report = (fields: Record<string, unknown>): void => {
      if (method === 'getUpdates' && !signal?.aborted) logger.warn({ method, ...fields }, 'telegram long poll failed');
    };
    try {
      const result = await prev(method, payload, signal);
      if (!result.ok) report({ errorCode: result.error_code, description: result.description });
      else if (method === 'getUpdates') onPolled();
      return result;
    } catch (error) {
      report(describeError(error));
      throw error;
    }
  };
}
