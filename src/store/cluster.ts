/**
 * Several hob processes on one database (issue 23), in the Store port. Only the PostgreSQL
 * store carries it (`Store.cluster`); the SQLite store is one process by design and has none,
 * so its message path pays nothing for it (the gateway's LocalCluster stands in).
 *
 * A process is a node: a row with a heartbeat, alive while the heartbeat is younger than the
 * lease time. Every time is the database's clock (epoch ms), so processes on machines whose
 * clocks differ still agree on who is alive. A conversation (session key) has at most one
 * owner at a time: a lease row whose epoch grows each time another node takes it, so a write
 * checked against the epoch a node holds is refused once the conversation was taken from it.
 * Leases need no renewing of their own: they live as long as their node does.
 */

/** What `acquire` found: the node holds it now (`mine`, `new`, or `taken` from a node that stopped or died), or a live node does. */
export type LeaseOutcome =
  | { kind: 'mine' | 'new' | 'taken'; epoch: number }
  | { kind: 'elsewhere'; owner: string };

export interface ClusterRepository {
  /** Registers a node, alive from now. */
  join(nodeId: string): void;
  /**
   * Renews the node's heartbeat every `everyMs` on a thread and connection of its own, so a
   * busy process is not taken for dead; until the returned function is called. `heartbeat`
   * is still how the node learns it was taken for dead.
   */
  beatInBackground(nodeId: string, everyMs: number): () => void;
  /** Renews a node's heartbeat; false when its row is gone (others judged it dead: its leases are lost). */
  heartbeat(nodeId: string): boolean;
  /**
   * A node stops: its conversation leases are released (kept with their epoch, without owner),
   * its outbox claims are due again (an attempt cut off is looked up before it is resent), its row goes.
   */
  leave(nodeId: string): void;
  /** Removes nodes whose heartbeat is older than `leaseMs`, releasing their outbox claims as `leave` does; their ids. */
  buryDead(leaseMs: number): string[];
  /** Ids of the nodes alive now. */
  liveNodes(leaseMs: number): string[];
  /**
   * Takes the conversation for `nodeId` unless a live node other than it holds it. Call it in
   * the transaction that stores what made the node want it, so both commit together.
   */
  acquire(sessionKey: string, nodeId: string, leaseMs: number): LeaseOutcome;
  /**
   * Whether `nodeId` still holds the conversation at `epoch`; inside a transaction the lease
   * row stays locked until it commits, so no takeover passes a write checked by it.
   */
  holds(sessionKey: string, nodeId: string, epoch: number): boolean;
  /**
   * Conversations on `platforms` with work left (messages queued in the inbox, a run cut off)
   * that no live node holds: what a node that stopped or died left to take over. Oldest work first.
   */
  orphans(platforms: readonly string[], leaseMs: number, limit: number): string[];
  /** Outbox sends claimed by nodes that are not alive are due again (a starting process's part of a restart). */
  releaseDeadClaims(leaseMs: number): void;
  /** Sends a notification when the surrounding transaction commits (at once outside one). */
  notify(channel: string, payload: string): void;
}
