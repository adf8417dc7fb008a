/**
 * What makes the fake Discord as strict as the real one about sending messages: the
 * per-channel rate limit buckets, `enforce_nonce`, and (for crash tests) answers held back.
 */
import type { Json } from './world.js';

/**
 * Discord's message buckets: in each channel, 5 messages created per 5 s and 5 edited per
 * 5 s. Every answer carries the bucket's headers (discord.js waits when one is empty); a
 * request past the limit gets 429 with `retry_after`.
 */
export class MessageBuckets {
  private readonly buckets = new Map<string, { remaining: number; resetAt: number }>();

  constructor(
    public limit = 5,
    public windowMs = 5000,
  ) {}

  /** Takes one request from `route` in a channel: the headers to send, and when refused, how long to wait (s). */
  take(route: 'create' | 'edit', channelId: string, now: number): { headers: Record<string, string>; retryAfter?: number } {
    const key = `${route}:${channelId}`;
    let bucket = this.buckets.get(key);
    if (!bucket || now >= bucket.resetAt) {
      bucket = { remaining: this.limit, resetAt: now + this.windowMs };
      this.buckets.set(key, bucket);
    }
    const resetAfter = Math.max(0, bucket.resetAt - now) / 1000;
    const refused = bucket.remaining === 0;
    if (!refused) bucket.remaining -= 1;
    const headers = {
      'x-ratelimit-limit': String(this.limit),
      'x-ratelimit-remaining': String(bucket.remaining),
      'x-ratelimit-reset': String(bucket.resetAt / 1000),
      'x-ratelimit-reset-after': resetAfter.toFixed(3),
      'x-ratelimit-bucket': `${route}-${channelId}`,
    };
    return refused ? { headers: { ...headers, 'x-ratelimit-scope': 'user' }, retryAfter: resetAfter } : { headers };
  }
}

/**
 * `enforce_nonce`, as Discord documents it: a message created with a nonce and
 * `enforce_nonce: true` is remembered for a few minutes; another create by the same author
 * with the same nonce in that time returns the existing message and makes no new one.
 * Discord keeps the nonce nowhere else: messages read back carry none.
 */
export class NonceMemory {
  private readonly seen = new Map<string, { messageId: string; at: number }>();

  constructor(public windowMs = 3 * 60_000) {}

  find(authorId: string, nonce: string, now: number): string | undefined {
    const entry = this.seen.get(`${authorId}:${nonce}`);
    return entry && now - entry.at < this.windowMs ? entry.messageId : undefined;
  }

  remember(authorId: string, nonce: string, messageId: string, now: number): void {
    this.seen.set(`${authorId}:${nonce}`, { messageId, at: now });
  }
}

/** Which request `holdNext` holds, beyond its `METHOD /path`, and whether it is carried out first. */
export type HoldOptions = {
  /** Only a request whose JSON body passes this is held. */
  when?: (body: Json) => boolean;
  /**
   * false: held before it is carried out, so the channel does not change until `release`: as
   * a request still on its way when hob died. Default true (carried out, answer held).
   */
  carriedOut?: boolean;
};

/** A request the fake carried out (or not yet: `carriedOut`) whose answer it holds back until `release` (or forever). */
export type Hold = { pattern: RegExp; when?: (body: Json) => boolean; carriedOut: boolean; arrived: Promise<void>; released: Promise<void>; markArrived(): void; release(): void };

export function newHold(pattern: RegExp, options: HoldOptions = {}): Hold {
  let arrived: () => void = () => undefined;
  let release: () => void = () => undefined;
  return {
    pattern,
    when: options.when,
    carriedOut: options.carriedOut ?? true,
    arrived: new Promise<void>((resolve) => (arrived = resolve)),
    released: new Promise<void>((resolve) => (release = resolve)),
    markArrived: () => arrived(),
    release: () => release(),
  };
}

/** Takes the first hold for this request (carried out first or not) out of `holds`. */
export function takeHold(holds: Hold[], request: string, body: Json, carriedOut: boolean): Hold | undefined {
  const index = holds.findIndex((hold) => hold.carriedOut === carriedOut && hold.pattern.test(request) && (hold.when?.(body) ?? true));
  return index < 0 ? undefined : holds.splice(index, 1)[0];
}
