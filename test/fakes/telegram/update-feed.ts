import { BotApiError, Params } from './params.js';
import type { Json } from './types.js';

/** Telegram's default when allowed_updates is empty or never set. */
const excludedByDefault = new Set(['chat_member', 'message_reaction', 'message_reaction_count']);

interface ParkedPoll {
  params: Params;
  answer: (outcome: Json[] | BotApiError) => void;
  timer: NodeJS.Timeout;
  /** Told once when the poll leaves (answered, timed out or its client gone). */
  onRelease?: () => void;
}

/**
 * How long a new getUpdates waits for an older parked poll to go away before terminating it
 * with 409: bot.stop() aborts its poll and at once sends a confirming getUpdates, which reaches
 * us before the aborted socket's close (one event-loop turn is not enough; on a loaded machine
 * 20 ms was not either). A poll whose client is gone releases at once, so this is a bound.
 */
const CLOSE_GRACE_MS = 400;

/**
 * The getUpdates side: a queue of unconfirmed updates and at most one parked long poll.
 * A parked poll is answered as soon as an update is pushed, when its timeout passes, or with
 * 409 when another getUpdates arrives (as Telegram terminates the older request).
 */
export class UpdateFeed {
  /** Every update ever pushed, in order, confirmed or not. */
  readonly history: Json[] = [];
  private queue: Json[] = [];
  private nextUpdateId = 1;
  private allowed: Set<string> | undefined;
  private parked: ParkedPoll | undefined;
  private wakeScheduled = false;
  private closed = false;
  /** Told after each push (the webhook side delivers it). */
  onPush: (() => void) | undefined;

  push(update: Json): number {
    const updateId = this.nextUpdateId++;
    const withId = { update_id: updateId, ...update };
    this.history.push(withId);
    this.queue.push(withId);
    // Deferred by one turn so updates injected back to back arrive in one batch, as they would.
    if (this.parked && !this.wakeScheduled) {
      this.wakeScheduled = true;
      setImmediate(() => {
        this.wakeScheduled = false;
        this.wake();
      });
    }
    this.onPush?.();
    return updateId;
  }

  /** The oldest pending update the bot asked for, left pending (webhook delivery). */
  peek(): Json | undefined {
    return this.take(new Params({})).at(0);
  }

  /** Confirms every update up to `updateId` (a webhook answered 2xx for it). */
  confirm(updateId: number): void {
    this.queue = this.queue.filter((update) => (update.update_id as number) > updateId);
  }

  /** allowed_updates as setWebhook or getUpdates last set it; an empty list means the default. */
  allow(allowed: unknown): void {
    if (Array.isArray(allowed)) this.allowed = allowed.length > 0 ? new Set(allowed.map(String)) : undefined;
  }

  dropPending(): void {
    this.queue = [];
  }

  /** Serves one getUpdates call; `answer` is called exactly once. */
  poll(params: Params, webhookActive: boolean, answer: (outcome: Json[] | BotApiError) => void, isGone: () => boolean): void {
    if (webhookActive) {
      answer(new BotApiError(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"));
      return;
    }
    const older = this.parked;
    if (older) {
      // Only a live older poll gets the 409 (see CLOSE_GRACE_MS).
      let waited = false;
      const go = (): void => {
        if (waited) return;
        waited = true;
        clearTimeout(grace);
        if (!isGone()) this.serve(params, answer);
      };
      const grace = setTimeout(go, CLOSE_GRACE_MS);
      older.onRelease = go;
      return;
    }
    this.serve(params, answer);
  }

  private serve(params: Params, answer: (outcome: Json[] | BotApiError) => void): void {
    if (this.closed) return answer([]);
    if (this.parked) {
      const older = this.parked;
      this.release(older);
      older.answer(new BotApiError(409, 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running'));
    }
    // The setting persists until a later call changes it.
    this.allow(params.json('allowed_updates'));
    const ready = this.take(params);
    const timeout = params.integer('timeout') ?? 0;
    if (ready.length > 0 || timeout <= 0) {
      answer(ready);
      return;
    }
    const poll: ParkedPoll = {
      params,
      answer,
      timer: setTimeout(() => {
        this.release(poll);
        answer([]);
      }, timeout * 1000),
    };
    this.parked = poll;
  }

  /** The client went away (e.g. runner.stop() aborted the fetch): forget its poll. */
  abandon(answer: (outcome: Json[] | BotApiError) => void): void {
    if (this.parked?.answer === answer) this.release(this.parked);
  }

  isParked(): boolean {
    return this.parked !== undefined;
  }

  /** Answers a parked poll with nothing, so close() leaves no request hanging. */
  close(): void {
    this.closed = true;
    const poll = this.parked;
    if (!poll) return;
    this.release(poll);
    poll.answer([]);
  }

  private wake(): void {
    const poll = this.parked;
    if (!poll) return;
    const ready = this.take(poll.params);
    if (ready.length === 0) return;
    this.release(poll);
    poll.answer(ready);
  }

  private release(poll: ParkedPoll): void {
    clearTimeout(poll.timer);
    if (this.parked === poll) this.parked = undefined;
    const told = poll.onRelease;
    poll.onRelease = undefined;
    // After the older poll's own answer has gone out.
    if (told) setImmediate(told);
  }

  private take(params: Params): Json[] {
    const offset = params.integer('offset') ?? 0;
    const limit = Math.min(100, Math.max(1, params.integer('limit') ?? 100));
    const id = (update: Json): number => update.update_id as number;
    // Types the bot did not ask for are discarded, as Telegram never stores them for it.
    this.queue = this.queue.filter((update) => {
      const type = Object.keys(update).find((key) => key !== 'update_id') ?? '';
      return this.allowed ? this.allowed.has(type) : !excludedByDefault.has(type);
    });
    // A negative offset keeps only the last -offset updates; a positive one confirms every
    // update before it. Either way the dropped ones are never served again.
    if (offset < 0) this.queue = this.queue.slice(offset);
    if (offset > 0) this.queue = this.queue.filter((update) => id(update) >= offset);
    return this.queue.slice(0, limit);
  }
}
