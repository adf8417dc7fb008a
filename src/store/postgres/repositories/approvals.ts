/** Approvals and pairing on PostgreSQL (the ports: ../../approvals.ts, ../../pairings.ts). */
import type { ApprovalDecisionValue, ApprovalRepository, ApprovalRow } from '../../approvals.js';
import type { PairingRepository, PairingRow } from '../../pairings.js';
import type { Sql } from '../sql.js';

const APPROVAL = `id, session_key "sessionKey", tool_use_id "toolUseId", requester_id "requesterId", platform, chat_id "chatId", thread_id "threadId",
  message_id "messageId", outbox_id "outboxId", tool_name "toolName", input, summary, created_at "createdAt", expires_at "expiresAt", decision, decided_by "decidedBy"`;

export class PostgresApprovals implements ApprovalRepository {
  constructor(private readonly sql: Sql) {}

  insert(row: Omit<ApprovalRow, 'decision' | 'decidedBy' | 'messageId' | 'outboxId'>): void {
    this.sql.run(
      'INSERT INTO approvals (id, session_key, tool_use_id, requester_id, platform, chat_id, thread_id, tool_name, input, summary, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      row.id, row.sessionKey, row.toolUseId, row.requesterId, row.platform, row.chatId, row.threadId, row.toolName, row.input, row.summary, row.createdAt, row.expiresAt,
    );
  }

  setOutbox(id: string, outboxId: number): void {
    this.sql.run('UPDATE approvals SET outbox_id = ? WHERE id = ?', outboxId, id);
  }

  setMessage(id: string, messageId: string): void {
    this.sql.run('UPDATE approvals SET message_id = ? WHERE id = ?', messageId, id);
  }

  get(id: string): ApprovalRow | undefined {
    return this.sql.get<ApprovalRow>(`SELECT ${APPROVAL} FROM approvals WHERE id = ?`, id);
  }

  decide(id: string, decision: ApprovalDecisionValue, decidedBy: string, now: number): boolean {
    return this.sql.run('UPDATE approvals SET decision = ?, decided_by = ?, decided_at = ? WHERE id = ? AND decision IS NULL', decision, decidedBy, now, id) === 1;
  }

  pending(): ApprovalRow[] {
    return this.sql.all<ApprovalRow>(`SELECT ${APPROVAL} FROM approvals WHERE decision IS NULL ORDER BY created_at`);
  }
}

const PAIRING = 'code, platform, user_id "userId", user_name "userName", chat_id "chatId", status, created_at "createdAt", expires_at "expiresAt"';

export class PostgresPairings implements PairingRepository {
  constructor(private readonly sql: Sql) {}

  insert(row: Omit<PairingRow, 'status'>): void {
    this.sql.run("INSERT INTO pairings (code, platform, user_id, user_name, chat_id, status, created_at, expires_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)", row.code, row.platform, row.userId, row.userName, row.chatId, row.createdAt, row.expiresAt);
  }

  byCode(code: string): PairingRow | undefined {
    return this.sql.get<PairingRow>(`SELECT ${PAIRING} FROM pairings WHERE code = ?`, code.toUpperCase());
  }

  pendingFor(platform: string, userId: string, now: number): PairingRow | undefined {
    return this.sql.get<PairingRow>(`SELECT ${PAIRING} FROM pairings WHERE platform = ? AND user_id = ? AND status = 'pending' AND expires_at > ? ORDER BY created_at DESC LIMIT 1`, platform, userId, now);
  }

  isApproved(platform: string, userId: string): boolean {
    return this.sql.get("SELECT 1 FROM pairings WHERE platform = ? AND user_id = ? AND status = 'approved' LIMIT 1", platform, userId) !== undefined;
  }

  approve(code: string, decidedBy: string, now: number): PairingRow | undefined {
    return this.sql.get<PairingRow>(
      `UPDATE pairings SET status = 'approved', decided_by = ?, decided_at = ? WHERE code = ? AND status = 'pending' AND expires_at > ? RETURNING ${PAIRING}`,
      decidedBy, now, code.toUpperCase(), now,
    );
  }

  revoke(platform: string, userId: string, decidedBy: string, now: number): number {
    return this.sql.run("UPDATE pairings SET status = 'revoked', decided_by = ?, decided_at = ? WHERE platform = ? AND user_id = ? AND status IN ('approved', 'pending')", decidedBy, now, platform, userId);
  }

  list(now: number): PairingRow[] {
    return this.sql.all<PairingRow>(`SELECT ${PAIRING} FROM pairings WHERE status = 'approved' OR (status = 'pending' AND expires_at > ?) ORDER BY created_at`, now);
  }
}
