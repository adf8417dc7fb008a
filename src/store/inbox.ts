/** Inbound messages in the Store port. */

export type QueuedInbound = { id: number; platform: string; sessionKey: string; message: string; batch: number | null };

/**
 * Inbound messages, written when they arrive and marked done when their run has taken them.
 * The (platform, update_id) key makes a redelivered update a no-op, also across restarts.
 */
export interface InboxRepository {
  /** Returns the row id, or undefined when this update was seen before. */
  add(entry: { platform: string; updateId: string; sessionKey: string; message: string; now: number }): number | undefined;
  /** Records an update handled on the spot (a command); false when it was seen before. */
  addDone(entry: { platform: string; updateId: string; sessionKey: string; now: number }): boolean;
  /** The newest message stored for a conversation (who wrote it, from what kind of chat). */
  latestFor(sessionKey: string): string | undefined;
  markDone(id: number): void;
  /**
   * Runs `work` (synchronous) and marks the rows done in the same commit: the engine storing
   * a person's message and its inbox rows' end are one write, not two.
   */
  markDoneWith(ids: number[], work: () => void): void;
  /** Rows not yet taken by a run, oldest first. */
  queued(): QueuedInbound[];
  /** One conversation's rows not yet taken by a run, oldest first. */
  queuedFor(sessionKey: string): QueuedInbound[];
  /** Marks rows as parts of one message (a long paste, an album): they are answered together. */
  setBatch(ids: number[]): void;
}
