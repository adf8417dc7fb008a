/** Nodes, conversation leases and outbox claims on PostgreSQL (the port: ../../cluster.ts). */
import type { ClusterRepository, LeaseOutcome } from '../../cluster.js';
import type { PostgresBridge } from '../bridge.js';
import type { Sql } from '../sql.js';

/** A node is alive while its heartbeat is younger than the lease time, by the database's clock. */
const ALIVE = 'n.heartbeat_at > hob_now_ms() - ?';

/** Which node claims the outbox rows this process sends (set when it joins). */
export type Claimant = { nodeId: string | undefined };

export class PostgresCluster implements ClusterRepository {
  constructor(
    private readonly sql: Sql,
    private readonly claimant: Claimant,
  ) {}

  join(nodeId: string): void {
    this.sql.run('INSERT INTO nodes (id, started_at, heartbeat_at) VALUES (?, hob_now_ms(), hob_now_ms()) ON CONFLICT (id) DO UPDATE SET heartbeat_at = hob_now_ms()', nodeId);
    this.claimant.nodeId = nodeId;
  }

  beatInBackground(nodeId: string, everyMs: number): () => void {
    const bridge = this.sql.bridge.sibling();
    // Only while the row is there: a node taken for dead learns it from its own `heartbeat` and joins again.
    bridge.repeat('UPDATE nodes SET heartbeat_at = hob_now_ms() WHERE id = $1', [nodeId], everyMs);
    return () => bridge.close();
  }

  heartbeat(nodeId: string): boolean {
    return this.sql.run('UPDATE nodes SET heartbeat_at = hob_now_ms() WHERE id = ?', nodeId) === 1;
  }

  leave(nodeId: string): void {
    this.sql.transaction(() => {
      this.sql.run('UPDATE conversation_leases SET node_id = NULL WHERE node_id = ?', nodeId);
      this.releaseClaims([nodeId]);
      this.sql.run('DELETE FROM nodes WHERE id = ?', nodeId);
    });
  }

  buryDead(leaseMs: number): string[] {
    return this.sql.transaction(() => {
      const dead = this.sql.all<{ id: string }>('DELETE FROM nodes WHERE heartbeat_at <= hob_now_ms() - ? RETURNING id', leaseMs).map((row) => row.id);
      if (dead.length) this.releaseClaims(dead);
      return dead;
    });
  }

  liveNodes(leaseMs: number): string[] {
    return this.sql.all<{ id: string }>(`SELECT id FROM nodes n WHERE ${ALIVE}`, leaseMs).map((row) => row.id);
  }

  acquire(sessionKey: string, nodeId: string, leaseMs: number): LeaseOutcome {
    // Taken when free, released, or held by a node that is no longer alive; a concurrent
    // acquire waits on the row and then sees the winner alive.
    const taken = this.sql.get<{ epoch: number; inserted: boolean }>(
      `INSERT INTO conversation_leases AS l (session_key, node_id, epoch, taken_at) VALUES (?, ?, 1, hob_now_ms())
       ON CONFLICT (session_key) DO UPDATE SET node_id = EXCLUDED.node_id, epoch = l.epoch + 1, taken_at = EXCLUDED.taken_at
       WHERE l.node_id IS DISTINCT FROM EXCLUDED.node_id AND (l.node_id IS NULL OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = l.node_id AND ${ALIVE}))
       RETURNING l.epoch, (xmax = 0) AS inserted`,
      sessionKey, nodeId, leaseMs,
    );
    if (taken) return { kind: taken.inserted ? 'new' : 'taken', epoch: taken.epoch };
    const held = this.sql.get<{ node_id: string; epoch: number }>('SELECT node_id, epoch FROM conversation_leases WHERE session_key = ?', sessionKey);
    if (!held) throw new Error(`the lease of ${sessionKey} vanished while it was taken`);
    return held.node_id === nodeId ? { kind: 'mine', epoch: held.epoch } : { kind: 'elsewhere', owner: held.node_id };
  }

  holds(sessionKey: string, nodeId: string, epoch: number): boolean {
    return this.sql.get('SELECT 1 FROM conversation_leases WHERE session_key = ? AND node_id = ? AND epoch = ? FOR SHARE', sessionKey, nodeId, epoch) !== undefined;
  }

  orphans(platforms: readonly string[], leaseMs: number, limit: number): string[] {
    if (platforms.length === 0) return [];
    return this.sql
      .all<{ k: string }>(
        `SELECT w.k FROM (
           SELECT session_key k, min(id) AS first FROM inbox WHERE status = 'queued' GROUP BY session_key
           UNION ALL SELECT session_key, 0 FROM sessions WHERE active AND running
         ) w
         WHERE split_part(w.k, ':', 1) = ANY(?::text[])
           AND NOT EXISTS (SELECT 1 FROM conversation_leases l JOIN nodes n ON n.id = l.node_id WHERE l.session_key = w.k AND ${ALIVE})
         GROUP BY w.k ORDER BY min(w.first) LIMIT ?`,
        platforms, leaseMs, limit,
      )
      .map((row) => row.k);
  }

  releaseDeadClaims(leaseMs: number): void {
    this.sql.run(
      `UPDATE outbox SET next_attempt_at = hob_now_ms(), unconfirmed = (attempted_at IS NOT NULL OR unconfirmed), lease_node = NULL
       WHERE status = 'pending' AND next_attempt_at > hob_now_ms()
         AND (lease_node IS NULL OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = outbox.lease_node AND ${ALIVE}))`,
      leaseMs,
    );
  }

  notify(channel: string, payload: string): void {
    this.sql.get('SELECT pg_notify(?, ?)', channel, payload);
  }

  /** Sends the nodes had claimed are due now; one whose attempt had started may have reached the chat: looked up first. */
  private releaseClaims(nodes: string[]): void {
    this.sql.run(
      "UPDATE outbox SET next_attempt_at = hob_now_ms(), unconfirmed = (attempted_at IS NOT NULL OR unconfirmed), lease_node = NULL WHERE status = 'pending' AND lease_node = ANY(?::text[])",
      nodes,
    );
  }
}
