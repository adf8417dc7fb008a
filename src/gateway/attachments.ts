import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { errorMessage } from '../core/errors.js';
import type { ImageBlock } from '../core/messages.js';
import type { Attachment } from './channel.js';

/** The largest file hob downloads (the lowest limit a chat service sets for bots). */
export const MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * Turns what a person attached into something the model can use: photos become image
 * blocks; documents, voice notes and the rest are saved under `workspace/inbox/` and named
 * in the message, so tools can open them.
 */
export async function attachmentBlocks(attachments: Attachment[], workspace: string): Promise<{ blocks: ImageBlock[]; notes: string[] }> {
  const blocks: ImageBlock[] = [];
  const notes: string[] = [];
  for (const attachment of attachments) {
    const label = attachment.fileName ?? attachment.kind;
    if (attachment.sizeBytes !== undefined && attachment.sizeBytes > MAX_DOWNLOAD_BYTES) {
      notes.push(`[The person sent ${label} (${kb(attachment.sizeBytes)}), too large to download (limit 20 MB).]`);
      continue;
    }
    try {
      const data = await attachment.download();
      const mediaType = attachment.mimeType ?? sniffImage(data);
      if (attachment.kind === 'image' && mediaType && IMAGE_TYPES.has(mediaType)) {
        blocks.push({ type: 'image', mediaType, data: data.toString('base64') });
        continue;
      }
      const { savedAs } = await saveInInbox(workspace, attachment, data);
      notes.push(`[The person sent a ${attachment.kind}: ${savedAs} (${kb(data.length)}${attachment.mimeType ? `, ${attachment.mimeType}` : ''}).]`);
    } catch (error) {
      notes.push(`[The person sent ${label}, but it could not be downloaded: ${errorMessage(error)}]`);
    }
  }
  return { blocks, notes };
}

/** Keeps a file in `workspace/inbox/` under a safe, unique name; `savedAs` is how people and the model are told where. */
export async function saveInInbox(workspace: string, attachment: Attachment, data: Buffer): Promise<{ path: string; savedAs: string }> {
  const dir = join(workspace, 'inbox');
  await mkdir(dir, { recursive: true });
  const name = `${Date.now()}-${safeName(attachment.fileName ?? `${attachment.kind}${extensionFor(attachment)}`)}`;
  const path = join(dir, name);
  await writeFile(path, data);
  return { path, savedAs: `inbox/${name}` };
}

function sniffImage(data: Buffer): string | undefined {
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (data[0] === 0xff && data[1] === 0xd8) return 'image/jpeg';
  if (data.subarray(0, 4).toString() === 'GIF8') return 'image/gif';
  if (data.subarray(0, 4).toString() === 'RIFF' && data.subarray(8, 12).toString() === 'WEBP') return 'image/webp';
  return undefined;
}

function extensionFor(attachment: Attachment): string {
  if (attachment.kind === 'voice') return '.ogg';
  return '';
}

function safeName(name: string): string {
  return basename(name).replace(/[^\w.-]+/g, '_').slice(0, 100) || 'file';
}

const kb = (bytes: number) => `${Math.max(1, Math.round(bytes / 1024))} KB`;
