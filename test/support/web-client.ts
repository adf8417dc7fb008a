/**
 * A web chat page without a browser: the same HTTP calls and the same event stream as
 * adapters/web/page/app.js, over real HTTP, keeping the chat as the page would show it. Used by
 * the web contract run, the HTTP-level tests and the benchmark (the Chromium tests drive the
 * real page instead).
 */
import type { BotCommand } from '../../src/gateway/channel.js';
import type { WebPerson } from '../../adapters/web/identities.js';
import type { PageEvent, PageMessage } from '../../adapters/web/page-events.js';
import { Waiters } from '../fakes/waiters.js';

export class WebPageClient {
  /** hob's and the person's messages, in the page's order. */
  messages: PageMessage[] = [];
  /** What the page would pop up: press answers over the stream, and refusals of calls. */
  readonly notices: string[] = [];
  readonly events: PageEvent['type'][] = [];
  commands: BotCommand[] = [];
  me: WebPerson | undefined;
  signedOut = false;
  cookie: string | undefined;
  private stream: AbortController | undefined;

  constructor(
    readonly baseUrl: string,
    readonly waiters = new Waiters(),
    /** What the browser would send as Origin (the page's own unless a test says otherwise). */
    readonly origin = baseUrl,
  ) {}

  /** Opens a sign-in link: posts its code, keeps the cookie. Returns hob's answer. */
  async signIn(link: string): Promise<Response> {
    const code = new URLSearchParams(new URL(link).hash.slice(1)).get('code') ?? '';
    return this.keepCookie(await this.post('/api/signin', { code }));
  }

  async askForAccess(name: string): Promise<Response> {
    return this.keepCookie(await this.post('/api/access', { name }));
  }

  /** Opens the event stream and waits for the chat's snapshot. */
  async open(): Promise<void> {
    const controller = new AbortController();
    this.stream = controller;
    const response = await browserFetch(`${this.baseUrl}/api/events`, { headers: this.headers(), signal: controller.signal });
    if (!response.ok || !response.body) throw new Error(`event stream refused: ${response.status} ${await response.text()}`);
    void this.read(response.body).catch(() => undefined);
    await this.waiters.waitFor(() => this.me, 5000, () => 'the snapshot');
  }

  say(text: string, more: { attachments?: string[]; nonce?: string } = {}): Promise<Response> {
    return this.post('/api/messages', { text, ...more });
  }

  async upload(name: string, data: Buffer, type = 'application/octet-stream'): Promise<string> {
    const response = await browserFetch(`${this.baseUrl}/api/uploads`, {
      method: 'POST',
      headers: { ...this.headers(), 'Content-Type': type, 'X-File-Name': encodeURIComponent(name) },
      body: data,
    });
    const body = (await response.json()) as { file?: { id: string }; error?: string };
    if (!body.file) throw new Error(`upload refused: ${response.status} ${body.error}`);
    return body.file.id;
  }

  /** Presses a button; a refusal is kept in `notices`, as the page shows it. */
  async press(messageId: string, data: string): Promise<Response> {
    const response = await this.post('/api/press', { messageId, data });
    if (!response.ok) this.notice(((await response.clone().json()) as { error: string }).error);
    return response;
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return browserFetch(`${this.baseUrl}${path}`, { headers: { ...this.headers(), ...headers } });
  }

  post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return browserFetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      headers: { ...this.headers(), 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  }

  /** hob's messages, as the person reads them (text without markup). */
  botMessages(): { id: string; text: string; buttons: { label: string; data: string }[]; live: boolean; file?: PageMessage['file'] }[] {
    return this.messages
      .filter((message) => message.from === 'hob')
      .map((message) => ({ id: message.id, text: textOf(message.html ?? ''), buttons: message.buttons.flat(), live: message.live === true, ...(message.file ? { file: message.file } : {}) }));
  }

  waitFor<T>(probe: () => T | undefined | false, what: string, timeoutMs = 8000): Promise<T> {
    return this.waiters.waitFor(probe, timeoutMs, () => `timed out waiting for ${what}; ${this.me?.id ?? 'page'} shows ${JSON.stringify(this.botMessages().map((m) => m.text)).slice(0, 2000)}; notices ${JSON.stringify(this.notices)}`);
  }

  close(): void {
    this.stream?.abort();
  }

  private headers(): Record<string, string> {
    return { Origin: this.origin, ...(this.cookie ? { Cookie: this.cookie } : {}) };
  }

  private keepCookie(response: Response): Response {
    const set = response.headers.get('set-cookie');
    // As a browser does: a cookie set with Max-Age=0 is gone.
    if (set) this.cookie = /;\s*Max-Age=0(;|$)/i.test(set) ? undefined : set.split(';')[0];
    return response;
  }

  private notice(text: string): void {
    this.notices.push(text);
    this.waiters.changed();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split('\n').find((line) => line.startsWith('data: '));
        if (data) this.apply(JSON.parse(data.slice(6)) as PageEvent);
      }
    }
  }

  private apply(event: PageEvent): void {
    this.events.push(event.type);
    switch (event.type) {
      case 'snapshot':
        this.me = event.me;
        this.messages = event.messages;
        this.commands = event.commands;
        break;
      case 'message': {
        const at = this.messages.findIndex((message) => message.id === event.message.id);
        if (at === -1) this.messages.push(event.message);
        else this.messages[at] = event.message;
        break;
      }
      case 'delete':
        this.messages = this.messages.filter((message) => message.id !== event.id);
        break;
      case 'notice':
        this.notices.push(event.text);
        break;
      case 'commands':
        this.commands = event.commands;
        break;
      case 'signedout':
        this.signedOut = true;
        break;
      case 'typing':
        break;
    }
    this.waiters.changed();
  }
}

/**
 * fetch, retried once when a kept-alive connection turns out closed (a browser does the same;
 * after hob restarts, the client may not have noticed its old connections go).
 */
async function browserFetch(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code !== 'UND_ERR_SOCKET' && code !== 'ECONNRESET') throw error;
    return fetch(url, init);
  }
}

/** hob's HTML as text: the renderer only writes tags and the five escapes. */
export function textOf(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}
