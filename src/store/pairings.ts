/** Pairing in the Store port: requests from unknown DM senders, and the approvals that let them in. */

export type PairingRow = {
  code: string;
  platform: string;
  userId: string;
  userName: string;
  chatId: string;
  status: 'pending' | 'approved' | 'revoked' | 'expired';
  createdAt: number;
  expiresAt: number;
};

export interface PairingRepository {
  insert(row: Omit<PairingRow, 'status'>): void;
  byCode(code: string): PairingRow | undefined;
  pendingFor(platform: string, userId: string, now: number): PairingRow | undefined;
  isApproved(platform: string, userId: string): boolean;
  /** Approves a pending, unexpired code; returns the row when this call approved it. */
  approve(code: string, decidedBy: string, now: number): PairingRow | undefined;
  revoke(platform: string, userId: string, decidedBy: string, now: number): number;
  list(now: number): PairingRow[];
}
