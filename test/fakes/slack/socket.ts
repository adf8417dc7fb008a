import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export type EnvelopeType = 'events_api' | 'interactive' | 'slash_commands';

type Connection = { socket: WebSocket; silent: boolean; closed: boolean };
type Pending = { id: string; type: EnvelopeType; resolve(payload: unknown): void; connection?: Connection; payload: unknown; retryAttempt: number };

/**
 * Slack's Socket Mode end on 127.0.0.1: each connection gets `hello`, then envelopes; the
 * client must ack each (`{envelope_id, payload}`). Slack pings the client on a timer and
 * answers its pings; a "silent" connection does neither and delivers nothing, as a socket
 * that looks open but is dead. `close()` fails when an envelope was never acked.
 *
 * An app may hold several connections (one per hob process, issue 23): as Slack does, the
 * envelopes are spread across the live ones, and an events envelope whose connection closed
 * before it was acked is delivered again on another (a retry, `retry_attempt` one more).
 */
export class FakeSocketMode {
  readonly connections: Connection[] = [];
  readonly acks: { envelope_id: string; payload?: unknown }[] = [];
  /** Called when a client connects (before hello), for benchmarks. */
  onConnection: (() => void) | undefined;
  /**
   * While set, envelopes go only to the connections opened with the app token of this label
   * (FakeSlack.appTokenFor: one per hob process, so a reconnect keeps its label). A test of
   * several processes sends a message to one process and a press to another with it.
   */
  deliverOn: string | undefined;
  /** Each connection's label: the one its Socket Mode URL carried ('' for the app's first token). */
  readonly labels = new Map<Connection, string>();
  private readonly pending = new Map<string, Pending>();
  private readonly wss: WebSocketServer;
  private readonly pinger: NodeJS.Timeout;
  private counter = 0;
  private turn = 0;

  constructor(pingIntervalMs: number) {
    // autoPong off: a silent connection must not answer the client's pings.
    this.wss = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: false });
    this.wss.on('connection', (socket, request) => {
      const connection: Connection = { socket, silent: false, closed: false };
      this.connections.push(connection);
      this.labels.set(connection, new URL(request.url ?? '/', 'ws://fake').searchParams.get('label') ?? '');
      this.onConnection?.();
      socket.on('ping', (data) => {
        if (!connection.silent) socket.pong(data);
      });
      socket.on('message', (raw) => {
        const ack = JSON.parse(raw.toString()) as { envelope_id: string; payload?: unknown };
        this.acks.push(ack);
        const pending = this.pending.get(ack.envelope_id);
        this.pending.delete(ack.envelope_id);
        pending?.resolve(ack.payload);
      });
      socket.on('close', () => {
        connection.closed = true;
        // Undelivered stays pending: close() then names it.
        for (const pending of this.pending.values()) if (pending.connection === connection && pending.type === 'events_api') this.deliver(pending, pending.retryAttempt + 1).catch(() => undefined);
      });
      socket.send(JSON.stringify({ type: 'hello', num_connections: this.open().length, debug_info: { host: 'fake-slack' }, connection_info: { app_id: 'A1' } }));
    });
    this.pinger = setInterval(() => {
      for (const connection of this.open()) if (!connection.silent) connection.socket.ping('fake');
    }, pingIntervalMs);
  }

  async listening(): Promise<void> {
    if (this.wss.address()) return;
    await new Promise<void>((resolve) => this.wss.once('listening', () => resolve()));
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/link/?ticket=fake&app_id=A1`;
  }

  open(): Connection[] {
    return this.connections.filter((connection) => !connection.closed);
  }

  /**
   * Sends one envelope on the newest live connection (waiting for one, as Slack queues while
   * the app reconnects) and resolves with the ack's payload.
   */
  async send(type: EnvelopeType, payload: unknown, retryAttempt = 0): Promise<unknown> {
    this.counter += 1;
    const id = `env-${this.counter}`;
    let pending: Pending | undefined;
    const acked = new Promise<unknown>((resolve) => (pending = { id, type, resolve, payload, retryAttempt }));
    this.pending.set(id, pending as Pending);
    await this.deliver(pending as Pending, retryAttempt);
    return acked;
  }

  /** Sends (or sends again) one envelope on a live connection. */
  private async deliver(pending: Pending, retryAttempt: number): Promise<void> {
    const connection = await this.live();
    pending.connection = connection;
    pending.retryAttempt = retryAttempt;
    const { id, type, payload } = pending;
    connection.socket.send(JSON.stringify({
      envelope_id: id,
      type,
      payload,
      accepts_response_payload: type !== 'events_api',
      ...(type === 'events_api' ? { retry_attempt: retryAttempt, retry_reason: retryAttempt ? 'timeout' : '' } : {}),
    }));
  }

  /** The newest connection stops pinging, ponging and delivering (it looks open). */
  goSilent(): void {
    const connection = this.open().at(-1);
    if (connection) connection.silent = true;
  }

  /** The newest connection drops without a close handshake. */
  drop(): void {
    this.open().at(-1)?.socket.terminate();
  }

  /** The newest live connection with this label, once there is one (as Slack holds envelopes while an app reconnects). */
  private async labelled(label: string, deadline: number): Promise<Connection> {
    for (;;) {
      const connection = this.open().filter((candidate) => this.labels.get(candidate) === label && !candidate.silent && candidate.socket.readyState === candidate.socket.OPEN).at(-1);
      if (connection) return connection;
      if (Date.now() > deadline) throw new Error(`fake Slack: no live connection labelled "${label}" to deliver to`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Envelopes sent and never acked. */
  unacked(): { id: string; type: EnvelopeType }[] {
    return [...this.pending.values()].map(({ id, type }) => ({ id, type }));
  }

  async close(): Promise<void> {
    clearInterval(this.pinger);
    for (const connection of this.connections) connection.socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  /** The next live connection, in turn (one app's several connections share its envelopes). */
  private async live(): Promise<Connection> {
    const deadline = Date.now() + 10_000;
    if (this.deliverOn !== undefined) return this.labelled(this.deliverOn, deadline);
    for (;;) {
      const live = this.open().filter((candidate) => !candidate.silent && candidate.socket.readyState === candidate.socket.OPEN);
      const connection = live[this.turn++ % Math.max(1, live.length)];
      if (connection) return connection;
      if (Date.now() > deadline) throw new Error('fake Slack: no live Socket Mode connection to deliver to');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}
