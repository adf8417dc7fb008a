/**
 * A process as a node of several on one PostgreSQL database (issue 23). It holds a lease on
 * each conversation it runs (one owner per session key; the epoch grows at each takeover),
 * kept alive by one heartbeat for the whole node every lease/3. A message stored by another
 * process for a conversation this one runs arrives by NOTIFY; a conversation whose node
 * stopped (it hands them over) or died (its heartbeat is older than the lease) is taken over
 * by a live node, which recovers it as a restart would, for that conversation only.
 */
import { errorMessage } from '../../core/errors.js';
import { newRunnerId } from '../../core/runner-id.js';
import { isTaskSession } from '../../engine/tasks/notification.js';
import type { Logger } from '../../logger.js';
import type { ClusterRepository } from '../../store/cluster.js';
import type { ConversationRepository } from '../../store/conversations.js';
import type { Cluster, ClusterHooks } from './cluster.js';
import { FencedConversations, LeaseLostError } from './fence.js';

/** NOTIFY channels: a message stored for another node's conversation; a node handing its conversations over. */
const INBOX_CHANNEL = 'hob_inbox';
const RELEASED_CHANNEL = 'hob_released';
/** Conversations taken over in one pass; the next heartbeat takes the rest. */
const ADOPT_BATCH = 100;

export type Notifications = {
  listen(channel: string, onPayload: (payload: string) => void): Promise<unknown>;
  close(): Promise<void>;
};

export type NodeClusterDeps = {
  repo: ClusterRepository;
  /** The store's transaction: a fenced write and its lease check commit together. */
  transaction<T>(fn: () => T): T;
  notifications: Notifications;
  leaseMs: number;
  logger: Logger;
  nodeId?: string;
};

export class NodeCluster implements Cluster {
  readonly nodeId: string;
  readonly several = true;
  /** Conversations this node holds, with the epoch it holds each at. */
  private readonly held = new Map<string, number>();
  /** Conversations this node held and lost (its heartbeat lapsed): their writes are refused. */
  private readonly lost = new Set<string>();
  /** Inbox rows queued in this process, by conversation, until their run takes them. */
  private readonly queuedHere = new Map<string, Set<number>>();
  /** Conversations taken by an `admit` whose transaction has not committed yet. */
  private readonly tentative = new Set<string>();
  private live = new Set<string>();
  private hooks: ClusterHooks | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopBeating: (() => void) | undefined;
  private beating: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly deps: NodeClusterDeps) {
    this.nodeId = deps.nodeId ?? newRunnerId();
  }

  admit(key: string, inboxId: number): boolean {
    if (this.held.has(key)) return this.queuedLocally(key, inboxId);
    const outcome = this.deps.repo.acquire(key, this.nodeId, this.deps.leaseMs);
    if (outcome.kind === 'elsewhere') {
      // Goes out when the inbox row commits: the owner reads it then.
      this.deps.repo.notify(INBOX_CHANNEL, JSON.stringify({ node: outcome.owner, key }));
      return false;
    }
    this.hold(key, outcome.epoch);
    if (this.tentative.size === 0) queueMicrotask(() => this.tentative.clear());
    this.tentative.add(key);
    if (outcome.kind !== 'taken') return this.queuedLocally(key, inboxId);
    // Another node stopped or died holding it: recovered (this message with the rest) once the row commits.
    queueMicrotask(() => void this.recover(new Set([key])));
    return false;
  }

  forget(key: string): void {
    if (!this.tentative.delete(key)) return;
    this.held.delete(key);
    this.queuedHere.delete(key);
  }

  unseen<Row extends { id: number }>(key: string, rows: Row[]): Row[] {
    const before = this.queuedHere.get(key) ?? new Set<number>();
    // Rows queued here that are no longer queued in the inbox were taken by their run.
    const now = new Set(rows.map((row) => row.id));
    const fresh = rows.filter((row) => !before.has(row.id));
    this.queuedHere.set(key, now);
    return fresh;
  }

  fence(conversations: ConversationRepository): ConversationRepository {
    return new FencedConversations(conversations, (key) => this.held.has(key) || this.lost.has(key), (key) => this.check(key), this.deps.transaction);
  }

  async start(hooks: ClusterHooks): Promise<void> {
    this.hooks = hooks;
    const { repo, leaseMs } = this.deps;
    repo.join(this.nodeId);
    // Beating from the moment it joins: the rest of a start keeps the main thread busy.
    const everyMs = Math.max(100, Math.floor(leaseMs / 3));
    this.stopBeating = repo.beatInBackground(this.nodeId, everyMs);
    repo.buryDead(leaseMs);
    // Sends claimed by nodes that are gone are due again; live nodes' sends stay theirs.
    repo.releaseDeadClaims(leaseMs);
    this.live = new Set(repo.liveNodes(leaseMs));
    await this.deps.notifications.listen(INBOX_CHANNEL, (payload) => this.onInbox(payload));
    await this.deps.notifications.listen(RELEASED_CHANNEL, () => void this.adopt());
    await this.adopt();
    this.timer = setInterval(() => void this.beat(), everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.stopBeating?.();
    await this.beating;
    try {
      this.deps.repo.leave(this.nodeId);
      this.deps.repo.notify(RELEASED_CHANNEL, this.nodeId);
    } catch (error) {
      this.deps.logger.warn({ node: this.nodeId, err: errorMessage(error) }, 'cluster: could not hand the conversations over; others take them when the lease runs out');
    }
    this.held.clear();
    await this.deps.notifications.close();
  }

  isGone(runner: string): boolean {
    return !this.live.has(runner);
  }

  private queuedLocally(key: string, inboxId: number): true {
    let ids = this.queuedHere.get(key);
    if (!ids) this.queuedHere.set(key, (ids = new Set()));
    ids.add(inboxId);
    return true;
  }

  private hold(key: string, epoch: number): void {
    this.held.set(key, epoch);
    this.lost.delete(key);
  }

  /** Throws when this node may not write for the conversation (it was taken over); keys it never held are not fenced. */
  private check(key: string): void {
    const epoch = this.held.get(key);
    if (epoch === undefined) {
      if (this.lost.has(key)) throw new LeaseLostError(key);
      return;
    }
    if (!this.deps.repo.holds(key, this.nodeId, epoch)) {
      this.held.delete(key);
      this.lost.add(key);
      throw new LeaseLostError(key);
    }
  }

  private onInbox(payload: string): void {
    if (this.stopped) return;
    let note: { node?: string; key?: string };
    try {
      note = JSON.parse(payload) as typeof note;
    } catch {
      return;
    }
    if (note.node !== this.nodeId || !note.key || !this.held.has(note.key)) return;
    try {
      this.hooks?.pull(note.key);
    } catch (error) {
      this.deps.logger.error({ session: note.key, err: errorMessage(error) }, 'cluster: could not queue a message another process stored');
    }
  }

  /** One heartbeat: renew this node, bury the dead, take over what they left. */
  private beat(): Promise<void> {
    this.beating ??= this.beatOnce().finally(() => (this.beating = undefined));
    return this.beating;
  }

  private async beatOnce(): Promise<void> {
    if (this.stopped) return;
    const { repo, leaseMs, logger } = this.deps;
    try {
      if (!repo.heartbeat(this.nodeId)) {
        // Others took this node for dead (it was silent longer than the lease): what it held is theirs now.
        logger.warn({ node: this.nodeId, conversations: this.held.size }, 'cluster: this process was taken for dead; its conversations went to others');
        for (const key of this.held.keys()) this.lost.add(key);
        this.held.clear();
        this.queuedHere.clear();
        repo.join(this.nodeId);
      }
      const dead = repo.buryDead(leaseMs);
      if (dead.length) logger.warn({ nodes: dead }, 'cluster: processes stopped answering; their conversations are taken over');
      this.live = new Set(repo.liveNodes(leaseMs));
      await this.adopt();
    } catch (error) {
      logger.warn({ node: this.nodeId, err: errorMessage(error) }, 'cluster: heartbeat failed; tried again at the next');
    }
  }

  /** Takes the conversations no live node holds and that have work left, and recovers them. */
  private async adopt(): Promise<void> {
    const hooks = this.hooks;
    if (!hooks || this.stopped) return;
    const { repo, leaseMs } = this.deps;
    const taken = new Set<string>();
    for (const key of repo.orphans(hooks.platforms, leaseMs, ADOPT_BATCH)) {
      // A background task's run is the task manager's to resume, not a conversation's.
      if (isTaskSession(key) || this.held.has(key)) continue;
      const outcome = repo.acquire(key, this.nodeId, leaseMs);
      if (outcome.kind === 'elsewhere') continue;
      this.hold(key, outcome.epoch);
      taken.add(key);
    }
    if (taken.size) await this.recover(taken);
  }

  private async recover(keys: Set<string>): Promise<void> {
    const held = new Set([...keys].filter((key) => this.held.has(key)));
    if (!held.size || !this.hooks) return;
    this.deps.logger.info({ node: this.nodeId, conversations: held.size }, 'cluster: took over conversations');
    try {
      await this.hooks.recover(held);
    } catch (error) {
      this.deps.logger.error({ node: this.nodeId, err: errorMessage(error) }, 'cluster: recovering conversations taken over failed');
    }
  }
}
