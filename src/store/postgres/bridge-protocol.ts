/**
 * What the synchronous bridge (bridge.ts) and its worker (worker.ts) say to each other. Each
 * request gets exactly one reply; the main thread sleeps on `state[0]` until the worker has
 * posted it (then sets it to 1 and notifies).
 */
import type { MessagePort } from 'node:worker_threads';

/** A value a statement takes: arrays become PostgreSQL arrays, byte arrays become bytea. */
export type SqlValue = string | number | boolean | null | Uint8Array | readonly (string | number | boolean | null)[];

export type BridgeRequest =
  | { id: number; kind: 'query'; sql: string; params: readonly SqlValue[] }
  /** Several statements in one text, no parameters (migrations, schema). */
  | { id: number; kind: 'exec'; sql: string }
  /** BEGIN, or a savepoint inside an open transaction. */
  | { id: number; kind: 'begin' }
  | { id: number; kind: 'commit' }
  | { id: number; kind: 'rollback' }
  | { id: number; kind: 'close' }
  /**
   * Runs a statement on the worker's own timer, every `everyMs`, until close (a node's
   * heartbeat: it keeps beating while the main thread is busy). Failures are dropped; the next beat retries.
   */
  | { id: number; kind: 'repeat'; sql: string; params: readonly SqlValue[]; everyMs: number };

export type BridgeFailure = { message: string; code?: string; detail?: string };

export type BridgeReply =
  | { id: number; ok: true; rows: Record<string, unknown>[]; rowCount: number }
  | { id: number; ok: false; failure: BridgeFailure; sql?: string };

/** What the worker is started with (`workerData`). The URL carries the password: it stays in this process. */
export type WorkerSettings = {
  url: string;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  /** Int32Array over it: [0] is set to 1 when a reply is posted. */
  state: SharedArrayBuffer;
  port: MessagePort;
};
