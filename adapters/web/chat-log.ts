/**
 * The web chats as the page shows them: every message hob sent (edits replace it) and every
 * message a person sent, with the files both ways. Kept in web.db, so a reload or a restart
 * shows the same chat; the newest KEPT_MESSAGES per chat are kept.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Button } from '../../src/gateway/channel.js';
import { webDir, type WebDb } from './web-db.js';

export type FileInfo = { id: string; name: string; mime: string; size: number };

export type ChatMessage = {
  id: number;
  chatId: string;
  fromBot: boolean;
  /** Markdown from hob (or plain text when `plain`); what the person typed, as typed. */
  text: string;
  plain: boolean;
  buttons: Button[][];
  /** A file hob sent with this message. */
  file?: FileInfo;
  /** Files the person sent with this message. */
  attachments: FileInfo[];
  /**
   * A live answer's message while it is written: its text lives in the adapter's memory until
   * it becomes the answer; one a crash left is hidden until the gateway settles it.
   */
  live: boolean;
  createdAt: number;
};

type MessageRow = { id: number; chatId: string; fromBot: number; text: string; plain: number; buttons: string | null; fileId: string | null; attachments: string | null; live: number; createdAt: number };

const KEPT_MESSAGES = 1000;
const COLUMNS = 'id, chat_id AS chatId, from_bot AS fromBot, text, plain, buttons, file_id AS fileId, attachments, live, created_at AS createdAt';

export class ChatLog {
  private insertsSincePrune = 0;

  constructor(
    private readonly db: WebDb,
    private readonly dataDir: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * One of hob's messages (`live`: a live answer's, see ChatMessage). With a `deliveryKey` (one
   * part of a delivery, see SendOptions) it is stored once: the same key again gives the
   * stored message back, so a send repeated after a crash never shows twice; a live message
   * under that key becomes this message.
   */
  addBot(chatId: string, message: { text: string; plain: boolean; buttons: Button[][]; fileId?: string; deliveryKey?: string; live?: boolean }): { message: ChatMessage; isNew: boolean } {
    if (message.deliveryKey !== undefined) {
      const earlier = this.byKey(chatId, message.deliveryKey);
      if (earlier?.live && !message.live) return { message: this.update(chatId, earlier.id, message) as ChatMessage, isNew: true };
      if (earlier) return { message: earlier, isNew: false };
    }
    const { lastInsertRowid } = this.db
      .prepare('INSERT INTO messages (chat_id, from_bot, text, plain, buttons, file_id, delivery_key, live, created_at) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?)')
      .run(chatId, message.text, message.plain ? 1 : 0, message.buttons.length ? JSON.stringify(message.buttons) : null, message.fileId ?? null, message.deliveryKey ?? null, message.live ? 1 : 0, this.now());
    this.pruneNowAndThen(chatId);
    return { message: this.get(chatId, Number(lastInsertRowid)) as ChatMessage, isNew: true };
  }

  /** hob's message stored under this delivery key (one part's), in this chat only. */
  byKey(chatId: string, deliveryKey: string): ChatMessage | undefined {
    const row = this.db.prepare(`SELECT ${COLUMNS} FROM messages WHERE chat_id = ? AND delivery_key = ? AND from_bot = 1`).get(chatId, deliveryKey) as MessageRow | undefined;
    return row && this.toMessage(row);
  }

  /** A person's message; the same `nonce` again (a retried POST) gives the first one back, not a second. */
  addPerson(chatId: string, message: { text: string; attachments: FileInfo[]; nonce?: string }): { message: ChatMessage; isNew: boolean } {
    if (message.nonce !== undefined) {
      const earlier = this.db.prepare(`SELECT ${COLUMNS} FROM messages WHERE chat_id = ? AND nonce = ?`).get(chatId, message.nonce) as MessageRow | undefined;
      if (earlier) return { message: this.toMessage(earlier), isNew: false };
    }
    const { lastInsertRowid } = this.db
      .prepare('INSERT INTO messages (chat_id, from_bot, text, plain, attachments, nonce, created_at) VALUES (?, 0, ?, 1, ?, ?, ?)')
      .run(chatId, message.text, message.attachments.length ? JSON.stringify(message.attachments.map((file) => file.id)) : null, message.nonce ?? null, this.now());
    this.pruneNowAndThen(chatId);
    return { message: this.get(chatId, Number(lastInsertRowid)) as ChatMessage, isNew: true };
  }

  /**
   * Replaces one of hob's messages' text and buttons (its file stays; a live message becomes
   * an ordinary one); undefined when it is not in that chat.
   */
  update(chatId: string, id: number, message: { text: string; plain: boolean; buttons: Button[][] }): ChatMessage | undefined {
    const { changes } = this.db
      .prepare('UPDATE messages SET text = ?, plain = ?, buttons = ?, live = 0 WHERE id = ? AND chat_id = ? AND from_bot = 1')
      .run(message.text, message.plain ? 1 : 0, message.buttons.length ? JSON.stringify(message.buttons) : null, id, chatId);
    return changes ? this.get(chatId, id) : undefined;
  }

  /** Removes a live message (one that never became an answer); false when there is none. */
  removeLive(chatId: string, id: number): boolean {
    return this.db.prepare('DELETE FROM messages WHERE id = ? AND chat_id = ? AND live = 1').run(id, chatId).changes > 0;
  }

  /** A message, only from the chat named (ids of other chats find nothing). */
  get(chatId: string, id: number): ChatMessage | undefined {
    const row = this.db.prepare(`SELECT ${COLUMNS} FROM messages WHERE id = ? AND chat_id = ?`).get(id, chatId) as MessageRow | undefined;
    return row && this.toMessage(row);
  }

  /** The chat's newest messages, oldest first. */
  recent(chatId: string, limit: number): ChatMessage[] {
    const rows = this.db.prepare(`SELECT ${COLUMNS} FROM messages WHERE chat_id = ? ORDER BY id DESC LIMIT ?`).all(chatId, limit) as MessageRow[];
    return rows.reverse().map((row) => this.toMessage(row));
  }

  /** Keeps a file for a chat (hob's, or one a person uploaded) under a random id. */
  async saveFile(chatId: string, file: { name: string; mime: string; data: Buffer; uploaded: boolean }): Promise<FileInfo> {
    const id = randomBytes(16).toString('hex');
    await writeFile(this.pathOf(id), file.data, { mode: 0o600 });
    this.db.prepare('INSERT INTO files (id, chat_id, uploaded, name, mime, size, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)').run(id, chatId, file.uploaded ? 1 : 0, file.name, file.mime, file.data.length, this.now());
    return { id, name: file.name, mime: file.mime, size: file.data.length };
  }

  /** Bytes a chat uploaded since `since` (a ceiling keeps one visitor from filling the disk). */
  uploadedBytes(chatId: string, since: number): number {
    const row = this.db.prepare('SELECT COALESCE(SUM(size), 0) AS bytes FROM files WHERE chat_id = ? AND uploaded = 1 AND created_at >= ?').get(chatId, since) as { bytes: number };
    return row.bytes;
  }

  /** A file's facts, only when it belongs to that chat. */
  file(chatId: string, id: string): (FileInfo & { uploaded: boolean }) | undefined {
    const row = this.db.prepare('SELECT id, name, mime, size, uploaded FROM files WHERE id = ? AND chat_id = ?').get(id, chatId) as (FileInfo & { uploaded: number }) | undefined;
    return row && { ...row, uploaded: row.uploaded === 1 };
  }

  /** A file's bytes by id (the gateway fetches an upload again this way after a restart). */
  async readFile(id: string): Promise<Buffer> {
    if (!/^[0-9a-f]{32}$/.test(id)) throw new Error(`not a web file id: ${id}`);
    return readFile(this.pathOf(id));
  }

  private pathOf(id: string): string {
    return join(webDir(this.dataDir), 'files', id);
  }

  private toMessage(row: MessageRow): ChatMessage {
    const fileOf = (id: string): FileInfo | undefined => {
      const file = this.db.prepare('SELECT id, name, mime, size FROM files WHERE id = ?').get(id) as FileInfo | undefined;
      return file && { id: file.id, name: file.name, mime: file.mime, size: file.size };
    };
    const file = row.fileId ? fileOf(row.fileId) : undefined;
    return {
      id: row.id,
      chatId: row.chatId,
      fromBot: row.fromBot === 1,
      text: row.text,
      plain: row.plain === 1,
      buttons: row.buttons ? (JSON.parse(row.buttons) as Button[][]) : [],
      ...(file ? { file } : {}),
      attachments: row.attachments ? (JSON.parse(row.attachments) as string[]).flatMap((id) => fileOf(id) ?? []) : [],
      live: row.live === 1,
      createdAt: row.createdAt,
    };
  }

  /** Every 50 messages, a chat past KEPT_MESSAGES loses its oldest (and their files). */
  private pruneNowAndThen(chatId: string): void {
    if (++this.insertsSincePrune < 50) return;
    this.insertsSincePrune = 0;
    const cut = this.db.prepare('SELECT id FROM messages WHERE chat_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?').get(chatId, KEPT_MESSAGES) as { id: number } | undefined;
    if (!cut) return;
    const files = this.db
      .prepare('SELECT f.id AS id FROM files f WHERE f.chat_id = ? AND f.created_at <= (SELECT created_at FROM messages WHERE id = ?)')
      .all(chatId, cut.id) as { id: string }[];
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM messages WHERE chat_id = ? AND id <= ?').run(chatId, cut.id);
      for (const file of files) this.db.prepare('DELETE FROM files WHERE id = ?').run(file.id);
    })();
    for (const file of files) void rm(this.pathOf(file.id), { force: true });
  }
}
