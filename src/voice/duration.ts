/**
 * What a note is and how long, read from its container where that costs two small reads: an Ogg
 * stream's last granule position (Opus counts 48 kHz samples, Vorbis its own rate) and a
 * WAV file's data size over its byte rate. Other containers go to ffprobe (ffmpeg.ts).
 */
import { open } from 'node:fs/promises';
import { sniffContainer, type AudioContainer } from './formats.js';

const HEAD_BYTES = 64 * 1024;
/** The largest Ogg page is 65,307 bytes, so the last complete page starts within this. */
const TAIL_BYTES = 65_536 + 1024;

/** What one open of a note tells: its size, its container, and its length when the header says it cheaply. */
export type NoteFacts = { bytes: number; container: AudioContainer; seconds?: number };

/** Reads a note's size, container and (Ogg, WAV) length: one open, at most two small reads. */
export async function readNoteFacts(path: string): Promise<NoteFacts> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const head = Buffer.alloc(Math.min(HEAD_BYTES, size));
    await file.read(head, 0, head.length, 0);
    const container = sniffContainer(head);
    if (container === 'wav') return { bytes: size, container, seconds: wavSeconds(head, size) };
    if (container !== 'ogg') return { bytes: size, container };
    const tailStart = Math.max(0, size - TAIL_BYTES);
    const tail = Buffer.alloc(size - tailStart);
    await file.read(tail, 0, tail.length, tailStart);
    return { bytes: size, container, seconds: oggSeconds(head, tail) };
  } finally {
    await file.close();
  }
}

/** WAV: the `data` chunk's size (or what follows it, for a stream that never filled it in) over the byte rate. */
export function wavSeconds(head: Buffer, fileSize: number): number | undefined {
  let offset = 12;
  let byteRate: number | undefined;
  while (offset + 8 <= head.length) {
    const id = head.toString('latin1', offset, offset + 4);
    const size = head.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ' && body + 12 <= head.length) byteRate = head.readUInt32LE(body + 8);
    if (id === 'data') {
      if (!byteRate) return undefined;
      const available = fileSize - body;
      const bytes = size === 0 || size === 0xffffffff || size > available ? available : size;
      return bytes / byteRate;
    }
    offset = body + size + (size % 2);
  }
  return undefined;
}

type OggPage = { granule: bigint; serial: number; headerType: number; payload: number; length: number };

function oggPageAt(bytes: Buffer, offset: number): OggPage | undefined {
  if (offset + 27 > bytes.length || bytes.toString('latin1', offset, offset + 4) !== 'OggS' || bytes[offset + 4] !== 0) return undefined;
  const headerType = bytes[offset + 5] ?? 0xff;
  if (headerType > 7) return undefined;
  const segments = bytes[offset + 26] ?? 0;
  if (offset + 27 + segments > bytes.length) return undefined;
  let payloadSize = 0;
  for (let i = 0; i < segments; i += 1) payloadSize += bytes[offset + 27 + i] ?? 0;
  const payload = offset + 27 + segments;
  return { granule: bytes.readBigInt64LE(offset + 6), serial: bytes.readUInt32LE(offset + 14), headerType, payload, length: payload - offset + payloadSize };
}

/** Ogg: the first page names the codec (and Opus's pre-skip); the last page with a granule position gives the end. */
export function oggSeconds(head: Buffer, tail: Buffer): number | undefined {
  const first = oggPageAt(head, 0);
  if (!first) return undefined;
  const packet = head.subarray(first.payload, first.payload + 64);
  let rate: number;
  let skip = 0;
  if (packet.toString('latin1', 0, 8) === 'OpusHead' && packet.length >= 12) {
    rate = 48_000;
    skip = packet.readUInt16LE(10);
  } else if (packet[0] === 1 && packet.toString('latin1', 1, 7) === 'vorbis' && packet.length >= 16) {
    rate = packet.readUInt32LE(12);
  } else {
    return undefined;
  }
  if (!rate) return undefined;
  // Walk back from the end: the last whole page of this stream whose granule is set (-1 means "no packet ends here").
  for (let offset = tail.lastIndexOf('OggS'); offset >= 0; offset = offset === 0 ? -1 : tail.lastIndexOf('OggS', offset - 1)) {
    const page = oggPageAt(tail, offset);
    if (!page || page.serial !== first.serial || page.granule < 0n || offset + page.length > tail.length) continue;
    return Math.max(0, Number(page.granule) - skip) / rate;
  }
  return undefined;
}
