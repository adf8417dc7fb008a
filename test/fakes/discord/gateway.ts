import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Json } from './world.js';

/** A frame the bot sent to the gateway. */
export type GatewayFrame = { op: number; d: unknown };

export type GatewayOptions = {
  token: string;
  heartbeatIntervalMs: number;
  /** READY's payload and the dispatches that follow it (GUILD_CREATE), for one shard `[id, count]`. */
  ready(sessionId: string, resumeUrl: string, shard: [number, number]): { ready: Json; after: { t: string; d: Json }[] };
  changed(): void;
};

type Dispatch = { s: number; t: string; d: unknown };

/** One identified shard: its session, its sequence, what it was sent (for RESUME), its socket while connected. */
type ShardSession = { shard: [number, number]; sessionId: string; seq: number; log: Dispatch[]; socket: WebSocket | undefined };

/** The shard Discord sends a server's events to; DMs (no server) go to shard 0. */
export function shardOf(guildId: string | undefined, count: number): number {
  return guildId === undefined ? 0 : Number((BigInt(guildId) >> 22n) % BigInt(count));
}

/**
 * The fake gateway websocket (JSON text frames, no compression, as discord.js sends without
 * zlib-sync): HELLO, IDENTIFY → READY, heartbeats and ACKs, dispatches with sequence numbers,
 * RESUME → the missed dispatches then RESUMED, INVALID_SESSION, and chosen close codes.
 * Shards as Discord runs them: IDENTIFY's `shard: [id, count]` (default [0, 1]) opens a
 * session per shard, each with its own sequence, and a dispatch goes to the one shard its
 * server maps to (shardOf), DMs to shard 0; an id not below the count is closed with 4010.
 */
export class FakeGateway {
  readonly frames: GatewayFrame[] = [];
  url = '';
  /** Close the next IDENTIFY with this code (4004 bad token, 4014 disallowed intents). */
  closeIdentifyWith: number | undefined;
  /** Answer the next RESUME with INVALID_SESSION (d: false): the bot must identify again. */
  invalidateNextResume = false;
  private readonly server: WebSocketServer;
  /** By shard id. */
  private readonly shards = new Map<number, ShardSession>();
  private sessions = 0;
  /** The count the bot last identified with: where dispatches are routed. */
  private shardCount = 1;

  constructor(private readonly options: GatewayOptions) {
    this.server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    this.server.on('connection', (socket, request) => this.connected(socket, request));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.once('listening', resolve));
    this.url = `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** True while a bot is connected and identified (or resumed) on some shard. */
  get live(): boolean {
    return [...this.shards.values()].some((session) => session.socket !== undefined);
  }

  /** The shards connected now, by id. */
  liveShards(): number[] {
    return [...this.shards.values()].filter((session) => session.socket !== undefined).map((session) => session.shard[0]).sort((a, b) => a - b);
  }

  identifies(): GatewayFrame[] {
    return this.frames.filter((frame) => frame.op === 2);
  }

  resumes(): GatewayFrame[] {
    return this.frames.filter((frame) => frame.op === 6);
  }

  /**
   * Sends a dispatch to the shard its server maps to (DMs: shard 0) now, or keeps it for that
   * shard's RESUME when it is not connected (as Discord does); nothing when no bot ever
   * identified that shard.
   */
  dispatch(t: string, d: unknown): void {
    const guildId = (d as Json | null)?.guild_id;
    const session = this.shards.get(shardOf(typeof guildId === 'string' ? guildId : undefined, this.shardCount));
    if (session) this.send(session, t, d);
  }

  /** The connection breaks without a close frame (the client sees 1006 and resumes): every shard's. */
  drop(): void {
    for (const session of this.shards.values()) {
      const socket = session.socket;
      session.socket = undefined;
      socket?.terminate();
    }
    this.options.changed();
  }

  /** Discord closes every shard's connection with a close code. */
  closeWith(code: number): void {
    for (const session of this.shards.values()) {
      const socket = session.socket;
      session.socket = undefined;
      socket?.close(code, 'closed by the fake');
    }
    this.options.changed();
  }

  private send(session: ShardSession, t: string, d: unknown): void {
    const event = { s: ++session.seq, t, d };
    session.log.push(event);
    if (session.log.length > 1000) session.log.shift();
    session.socket?.send(JSON.stringify({ op: 0, ...event }));
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
      for (const session of this.shards.values()) if (session.socket === socket) session.socket = undefined;
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
        const [id, count] = Array.isArray(d.shard) ? (d.shard as [number, number]) : [0, 1];
        if (!Number.isInteger(id) || !Number.isInteger(count) || id < 0 || count < 1 || id >= count) return void socket.close(4010, 'Invalid shard.');
        this.shardCount = count;
        const session: ShardSession = { shard: [id, count], sessionId: `session${++this.sessions}`, seq: 0, log: [], socket };
        this.shards.set(id, session);
        const { ready, after } = this.options.ready(session.sessionId, this.url, session.shard);
        this.send(session, 'READY', ready);
        for (const event of after) this.send(session, event.t, event.d);
        return;
      }
      case 6: {
        const session = [...this.shards.values()].find((entry) => entry.sessionId === d.session_id);
        if (this.invalidateNextResume || !session) {
          this.invalidateNextResume = false;
          for (const [id, entry] of this.shards) if (entry === session) this.shards.delete(id);
          return send(9, false);
        }
        session.socket = socket;
        const from = Number(d.seq ?? 0);
        for (const event of session.log.filter((entry) => entry.s > from)) socket.send(JSON.stringify({ op: 0, ...event }));
        this.send(session, 'RESUMED', null);
        return;
      }
      default:
        return;
    }
  }
}
