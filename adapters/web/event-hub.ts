/**
 * The open event streams (Server-Sent Events), one per open page: what hob sends, edits and
 * streams reaches every page of that chat at once. A stream whose session was signed out or
 * revoked (also by `hob web signout` in another process) is told so and closed within
 * `checkEveryMs`; a comment line every check keeps proxies from closing an idle stream.
 */
import type { ServerResponse } from 'node:http';
import type { PageEvent } from './page-events.js';

type Stream = { res: ServerResponse; chatId: string; tokenHash: string };

export class EventHub {
  private readonly streams = new Set<Stream>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly isLive: (tokenHash: string) => boolean,
    checkEveryMs = 10_000,
  ) {
    this.timer = setInterval(() => this.check(), checkEveryMs);
    this.timer.unref();
  }

  /** Starts a stream for a signed-in page; `first` is the chat as it is now. */
  open(res: ServerResponse, who: { chatId: string; tokenHash: string }, first: PageEvent): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      // nginx and the like would otherwise hold events back in a buffer.
      'X-Accel-Buffering': 'no',
    });
    const stream: Stream = { res, ...who };
    this.streams.add(stream);
    res.on('close', () => this.streams.delete(stream));
    // A page that went away mid-write is only gone; it must not become an uncaught error.
    res.on('error', () => this.streams.delete(stream));
    write(stream, first);
  }

  /** Sends an event to every open page of a chat. */
  toChat(chatId: string, event: PageEvent): void {
    for (const stream of this.streams) if (stream.chatId === chatId) write(stream, event);
  }

  /** Sends each open page its own event (menus differ between owners and others). */
  toEach(eventFor: (chatId: string) => PageEvent): void {
    for (const stream of this.streams) write(stream, eventFor(stream.chatId));
  }

  /** Ends the pages of a session now (signed out from that page). */
  endSession(tokenHash: string): void {
    for (const stream of this.streams) if (stream.tokenHash === tokenHash) this.end(stream);
  }

  get size(): number {
    return this.streams.size;
  }

  closeAll(): void {
    clearInterval(this.timer);
    for (const stream of this.streams) stream.res.end();
    this.streams.clear();
  }

  private check(): void {
    for (const stream of this.streams) {
      if (!this.isLive(stream.tokenHash)) this.end(stream);
      else if (open(stream)) stream.res.write(': still here\n\n');
    }
  }

  private end(stream: Stream): void {
    this.streams.delete(stream);
    write(stream, { type: 'signedout' });
    stream.res.end();
  }
}

function open(stream: Stream): boolean {
  return !stream.res.writableEnded && !stream.res.destroyed;
}

function write(stream: Stream, event: PageEvent): void {
  // JSON never holds a raw line break, so one `data:` line carries the whole event.
  if (open(stream)) stream.res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}
