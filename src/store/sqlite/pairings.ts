import type { PairingRepository, PairingRow } from '../pairings.js';
import type { Db } from './db.js';

type Raw = { code: string; platform: string; user_id: string; user_name: string; chat_id: string; status: PairingRow['status']; created_at: number; expires_at: number };
const fromRaw = (row: Raw): PairingRow => ({
  code: row.code,
  platform: row.platform,
  userId: row.user_id,
  userName: row.user_name,
  chatId: row.chat_id,
  status: row.status,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

/** Pairing on SQLite (the port: ../pairings.ts). */
export class SqlitePairings implements PairingRepository {
  constructor(private readonly db: Db) {}

  insert(row: Omit<PairingRow, 'status'>): void {
    this.db
      .prepare("INSERT INTO pairings (code, platform, user_id, user_name, chat_id, status, created_at, expires_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)")
      .run(row.code, row.platform, row.userId, row.userName, row.chatId, row.createdAt, row.expiresAt);
  }

  byCode(code: string): PairingRow | undefined {
    const row = this.db.prepare<[string], Raw>('SELECT * FROM pairings WHERE code = ?').get(code.toUpperCase());
    return row ? fromRaw(row) : undefined;
  }

  pendingFor(platform: string, userId: string, now: number): PairingRow | undefined {
    const row = this.db
      .prepare<[string, string, number], Raw>("SELECT * FROM pairings WHERE platform = ? AND user_id = ? AND status = 'pending' AND expires_at > ? ORDER BY created_at DESC LIMIT 1")
      .get(platform, userId, now);
    return row ? fromRaw(row) : undefined;
  }

  isApproved(platform: string, userId: string): boolean {
    return Boolean(this.db.prepare("SELECT 1 FROM pairings WHERE platform = ? AND user_id = ? AND status = 'approved' LIMIT 1").get(platform, userId));
  }

  /** Approves a pending, unexpired code; returns the row when this call approved it. */
  approve(code: string, decidedBy: string, now: number): PairingRow | undefined {
    const changed = this.db
      .prepare("UPDATE pairings SET status = 'approved', decided_by = ?, decided_at = ? WHERE code = ? AND status = 'pending' AND expires_at > ?")
      .run(decidedBy, now, code.toUpperCase(), now).changes;
    return changed === 1 ? this.byCode(code) : undefined;
  }

  revoke(platform: string, userId: string, decidedBy: string, now: number): number {
    return this.db
      .prepare("UPDATE pairings SET status = 'revoked', decided_by = ?, decided_at = ? WHERE platform = ? AND user_id = ? AND status IN ('approved', 'pending')")
      .run(decidedBy, now, platform, userId).changes;
  }

  list(now: number): PairingRow[] {
    return this.db
      .prepare<[number], Raw>("SELECT * FROM pairings WHERE status = 'approved' OR (status = 'pending' AND expires_at > ?) ORDER BY created_at")
      .all(now)
      .map(fromRaw);
  }
}
