/**
 * An inbound message as the inbox keeps it until its run has taken it: everything but the
 * download closures, so a restart can queue it again. Files come back through the refs the
 * adapter gave them; a file without one (or a row from before refs) is named as lost, so the
 * model can ask for it again.
 */
import type { Attachment, ChatType, InboundMessage } from './channel.js';

/** An attachment as the inbox keeps it: everything but the download closure. */
type StoredAttachment = Omit<Attachment, 'download'>;

/** An inbound message as the inbox keeps it (rows from before attachment refs hold a count). */
export type StoredInbound = {
  platform: string;
  chatId: string;
  threadId?: string;
  chatType: ChatType;
  userId: string;
  userName: string;
  text: string;
  attachments: StoredAttachment[] | number;
  /** A group's voice note not addressed to hob: answered only when it names hob. */
  overheard?: boolean;
  /**
   * issue 23: a chat command for the conversation (its text is the command), stored where it
   * arrived for the process that runs the conversation: that process runs it, not the model.
   */
  command?: true;
};

/** The inbox row's message column. */
export function storeInbound(message: InboundMessage, marks: { overheard?: boolean; command?: boolean } = {}): string {
  const stored: StoredInbound = {
    platform: message.platform,
    chatId: message.chatId,
    threadId: message.threadId,
    chatType: message.chatType,
    userId: message.userId,
    userName: message.userName,
    text: message.text,
    attachments: message.attachments.map(({ download: _download, ...kept }) => kept),
    ...(marks.overheard ? { overheard: true } : {}),
    ...(marks.command ? { command: true } : {}),
  };
  return JSON.stringify(stored);
}

/** A stored command as the message it came in (its files and platform-only parts, such as a private way to answer, do not travel). */
export function storedCommand(stored: StoredInbound): InboundMessage {
  const { platform, chatId, threadId, chatType, userId, userName, text } = stored;
  return { platform, chatId, ...(threadId ? { threadId } : {}), chatType, userId, userName, text, attachments: [], mentionsBot: true, replyToBot: false, messageId: '' };
}

export function readInbound(json: string): StoredInbound {
  return JSON.parse(json) as StoredInbound;
}

/** The parts of one message (a paste, an album) put back together: its text, and its files where they can be fetched again. */
export function restoreParts(parts: StoredInbound[], download: ((ref: string) => Promise<Buffer>) | undefined): { text: string; attachments: Attachment[]; overheard?: boolean } {
  const attachments: Attachment[] = [];
  let lostCount = 0;
  for (const stored of parts) {
    if (typeof stored.attachments === 'number') {
      lostCount += stored.attachments;
      continue;
    }
    for (const attachment of stored.attachments) {
      const { ref } = attachment;
      if (ref !== undefined && download) attachments.push({ ...attachment, download: () => download(ref) });
      else lostCount += 1;
    }
  }
  const text = parts.map((stored) => stored.text).filter((part) => part !== '').join('\n');
  const lost = lostCount ? `\n[${lostCount} attachment(s) were lost in a restart; ask the person to send them again.]` : '';
  return { text: text + lost, attachments, ...(parts.every((stored) => stored.overheard) ? { overheard: true } : {}) };
}
