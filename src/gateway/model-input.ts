/**
 * What the model reads for one message a person sent: their words (named, in a group, so the
 * model knows who speaks), then what they attached — photos as image blocks, other files saved
 * in the workspace's inbox and named in a line. This runs in the conversation's worker, when
 * the message's turn comes, never in the platform's handler: downloads take their time.
 */
import { text, type Block } from '../core/messages.js';
import { attachmentBlocks } from './attachments.js';
import type { Attachment, ChatType } from './channel.js';

/** The line the model reads for a text: in groups the model must know who speaks. */
export function lineFor(message: { text: string; userName: string }, chatType: ChatType): string {
  return chatType === 'dm' ? message.text : `[${message.userName}] ${message.text}`;
}

/**
 * A message without attachments as the model's content blocks, at once (undefined when it has
 * some): with no await before it, the engine stores the message inside the inbound commit.
 */
export function textInput(message: { text: string; userName: string; attachments: Attachment[] }, chatType: ChatType): Block[] | undefined {
  return message.attachments.length ? undefined : [text(lineFor(message, chatType))];
}

/** The message as the model's content blocks; attachments are downloaded now. */
export async function modelInput(message: { text: string; userName: string; attachments: Attachment[] }, chatType: ChatType, workspace: string): Promise<Block[]> {
  const plain = textInput(message, chatType);
  if (plain) return plain;
  const { blocks, notes } = await attachmentBlocks(message.attachments, workspace);
  const described = [message.text, ...notes].filter(Boolean).join('\n');
  return [text(lineFor({ ...message, text: described }, chatType)), ...blocks];
}
