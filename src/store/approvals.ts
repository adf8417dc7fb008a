/** Approvals in the Store port: a tool call waiting for a person's yes or no. */

export type ApprovalDecisionValue = 'allow_once' | 'allow_always' | 'deny' | 'timeout' | 'cancelled';

export type ApprovalRow = {
  id: string;
  sessionKey: string;
  toolUseId: string;
  requesterId: string;
  platform: string;
  chatId: string;
  threadId: string | null;
  messageId: string | null;
  /** The outbox row of the prompt, so a prompt not yet delivered can be withdrawn. */
  outboxId: number | null;
  toolName: string;
  input: string;
  summary: string;
  createdAt: number;
  expiresAt: number;
  decision: ApprovalDecisionValue | null;
  decidedBy: string | null;
};

/** Pending and decided approvals; a decision is written once and never changed. */
export interface ApprovalRepository {
  insert(row: Omit<ApprovalRow, 'decision' | 'decidedBy' | 'messageId' | 'outboxId'>): void;
  setOutbox(id: string, outboxId: number): void;
  setMessage(id: string, messageId: string): void;
  get(id: string): ApprovalRow | undefined;
  /** Records the decision if none was recorded yet; returns whether this call decided it. */
  decide(id: string, decision: ApprovalDecisionValue, decidedBy: string, now: number): boolean;
  pending(): ApprovalRow[];
}
