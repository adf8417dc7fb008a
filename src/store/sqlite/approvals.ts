import type { ApprovalDecisionValue, ApprovalRepository, ApprovalRow } from '../approvals.js';
import type { Db } from './db.js';

type Raw = {
  id: string;
  session_key: string;
  tool_use_id: string;
  requester_id: string;
  platform: string;
  chat_id: string;
  thread_id: string | null;
  message_id: string | null;
  outbox_id: number | null;
  tool_name: string;
  input: string;
  summary: string;
  created_at: number;
  expires_at: number;
  decision: ApprovalDecisionValue | null;
  decided_by: string | null;
};

const fromRaw = (row: Raw): ApprovalRow => ({
  id: row.id,
  sessionKey: row.session_key,
  toolUseId: row.tool_use_id,
  requesterId: row.requester_id,
  platform: row.platform,
  chatId: row.chat_id,
  threadId: row.thread_id,
  messageId: row.message_id,
  outboxId: row.outbox_id,
  toolName: row.tool_name,
  input: row.input,
  summary: row.summary,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  decision: row.decision,
  decidedBy: row.decided_by,
});

/** Approvals on SQLite (the port: ../approvals.ts). */
export class SqliteApprovals implements ApprovalRepository {
  constructor(private readonly db: Db) {}

  insert(row: Omit<ApprovalRow, 'decision' | 'decidedBy' | 'messageId' | 'outboxId'>): void {
    this.db
      .prepare(
        `INSERT INTO approvals (id, session_key, tool_use_id, requester_id, platform, chat_id, thread_id, tool_name, input, summary, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(row.id, row.sessionKey, row.toolUseId, row.requesterId, row.platform, row.chatId, row.threadId, row.toolName, row.input, row.summary, row.createdAt, row.expiresAt);
  }

  setOutbox(id: string, outboxId: number): void {
    this.db.prepare('UPDATE approvals SET outbox_id = ? WHERE id = ?').run(outboxId, id);
  }

  setMessage(id: string, messageId: string): void {
    this.db.prepare('UPDATE approvals SET message_id = ? WHERE id = ?').run(messageId, id);
  }

  get(id: string): ApprovalRow | undefined {
    const row = this.db.prepare<[string], Raw>('SELECT * FROM approvals WHERE id = ?').get(id);
    return row ? fromRaw(row) : undefined;
  }

  /** Records the decision if none was recorded yet; returns whether this call decided it. */
  decide(id: string, decision: ApprovalDecisionValue, decidedBy: string, now: number): boolean {
    const changed = this.db
      .prepare('UPDATE approvals SET decision = ?, decided_by = ?, decided_at = ? WHERE id = ? AND decision IS NULL')
      .run(decision, decidedBy, now, id).changes;
    return changed === 1;
  }

  pending(): ApprovalRow[] {
    return this.db.prepare<[], Raw>('SELECT * FROM approvals WHERE decision IS NULL ORDER BY created_at').all().map(fromRaw);
  }
}
