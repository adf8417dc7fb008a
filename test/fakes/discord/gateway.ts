import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Json } from './world.js';

/** A frame the bot sent to the gateway. */
export type GatewayFrame = { op: number; d: unknown };

export type GatewayOptions = {
  token: string;
  heartbeatIntervalMs: number;
  /** READY's payload and the dispatches that follow it (GUILD_CREATE). */
  ready(sessionId: string, resumeUrl: string): { ready: Json; after: { t: string; d: Json }[] };
  changed(): void;
};

type Dispatch = { s: number; t: string; d: unknown };

/**
 * The fake gateway websocket (JSON text frames, no compression, as discord.js sends without
 * zlib-sync): HELLO, IDENTIFY → READY, heartbeats and ACKs, dispatches with sequence numbers,
 * RESUME → the missed dispatches then RESUMED, INVALID_SESSION, and chosen close codes.
 */
export class FakeGateway {
  readonly frames: GatewayFrame[] = [];
  url = '';
  /** Close the next IDENTIFY with this code (4004 bad token, 4014 disallowed intents). */
  closeIdentifyWith: number | undefined;
  /** Answer the next RESUME with INVALID_SESSION (d: false): the bot must identify again. */
  invalidateNextResume = false;
  private readonly server: WebSocketServer;
  private socket: WebSocket | undefined;
  private sessionId: string | undefined;
  private sessions = 0;
  private seq = 0;
  private log: Dispatch[] = [];

  constructor(private readonly options: GatewayOptions) {
    this.server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    this.server.on('connection', (socket, request) => this.connected(socket, request));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.once('listening', resolve));
    this.url = `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** True while a bot is connected and identified (or resumed). */
  get live(): boolean {
    return this.socket !== undefined;
  }

  identifies(): GatewayFrame[] {
    return this.frames.filter((frame) => frame.op === 2);
  }

  resumes(): GatewayFrame[] {
    return this.frames.filter((frame) => frame.op === 6);
  }

  /** Sends a dispatch now, or keeps it for the RESUME when no bot is connected (as Discord does). */
  dispatch(t: string, d: unknown): void {
    const event = { s: ++this.seq, t, d };
    this.log.push(event);
    if (this.log.length > 1000) this.log.shift();
    this.socket?.send(JSON.stringify({ op: 0, ...event }));
  }

  /** The connection breaks without a close frame (the client sees 1006 and resumes). */
  drop(): void {
    const socket = this.socket;
    this.socket = undefined;
    socket?.terminate();
    this.options.changed();
  }

  /** Discord closes the connection with a close code. */
  closeWith(code: number): void {
    const socket = this.socket;
    this.socket = undefined;
    socket?.close(code, 'closed by the fake');
    this.options.changed();
  }

  async close(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private connected(socket: WebSocket, _request: IncomingMessage): void {
    const send = (op: number, d: unknown) => socket.send(JSON.stringify({ op, d, s: null, t: null }));
    send(10, { heartbeat_interval: this.options.heartbeatIntervalMs });
    socket.on('message', (raw) => {
      const frame = JSON.parse(String(raw)) as GatewayFrame;
      this.frames.push(frame);
      this.handle(socket, frame, send);
      this.options.changed();
    });
    socket.on('close', () => {
      if (this.socket === socket) this.socket = undefined;
      this.options.changed();
    });
  }

  private handle(socket: WebSocket, frame: GatewayFrame, send: (op: number, d: unknown) => void): void {
    const d = (frame.d ?? {}) as Json;
    switch (frame.op) {
      case 1:
        send(11, null);
        return;
      case 2: {
        if (d.token !== this.options.token && d.token !== `Bot ${this.options.token}`) return void socket.close(4004, 'Authentication failed.');
        if (this.closeIdentifyWith !== undefined) return void socket.close(this.closeIdentifyWith, 'Disallowed intent(s).');
        this.sessionId = `session${++this.sessions}`;
        this.log = [];
        this.socket = socket;
        const { ready, after } = this.options.ready(this.sessionId, this.url);
        this.dispatch('READY', ready);
        for (const event of after) this.dispatch(event.t, event.d);
        return;
      }
      case 6: {
        if (this.invalidateNextResume || d.session_id !== this.sessionId) {
          this.invalidateNextResume = false;
          this.sessionId = undefined;
          return send(9, false);
        }
        this.socket = socket;
        const from = Number(d.seq ?? 0);
        for (const event of this.log.filter((entry) => entry.s > from)) socket.send(JSON.stringify({ op: 0, ...event }));
        this.dispatch('RESUMED', null);
        return;
      }
      default:
        return;
    }
  }
}
