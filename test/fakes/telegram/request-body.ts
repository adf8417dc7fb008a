import type { Json, UploadedFile } from './types.js';

/**
 * Reads a Bot API request body the three ways Telegram accepts: JSON, urlencoded (or query
 * string) and multipart/form-data. grammy writes multipart headers without spaces and with an
 * unquoted filename (`content-disposition:form-data;name="x";filename=r.txt`), which Node 20's
 * `Request#formData()` refuses, hence this small tolerant parser.
 */
export interface ParsedBody {
  fields: Json;
  files: UploadedFile[];
}

export class BodyError extends Error {}

export function parseRequestBody(contentType: string, raw: Buffer, query: URLSearchParams): ParsedBody {
  const fields: Json = Object.fromEntries(query);
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (raw.length === 0) return { fields, files: [] };
  if (type === 'application/json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new BodyError("Bad Request: can't parse JSON encoded request body");
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new BodyError('Bad Request: JSON object expected as request body');
    }
    return { fields: { ...fields, ...(parsed as Json) }, files: [] };
  }
  if (type === 'application/x-www-form-urlencoded') {
    return { fields: { ...fields, ...Object.fromEntries(new URLSearchParams(raw.toString('utf8'))) }, files: [] };
  }
  if (type === 'multipart/form-data') {
    const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
    const value = boundary?.[1] ?? boundary?.[2];
    if (!value) throw new BodyError('Bad Request: multipart boundary is missing');
    const parsed = parseMultipart(raw, value);
    return { fields: { ...fields, ...parsed.fields }, files: parsed.files };
  }
  throw new BodyError(`Bad Request: unsupported Content-Type ${type}`);
}

function parseMultipart(raw: Buffer, boundary: string): ParsedBody {
  // Every delimiter is preceded by CRLF except the first; prefixing one makes them uniform.
  const data = Buffer.concat([Buffer.from('\r\n'), raw]);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const fields: Json = {};
  const files: UploadedFile[] = [];
  let position = data.indexOf(delimiter);
  if (position < 0) throw new BodyError('Bad Request: multipart body has no boundary');
  for (;;) {
    position += delimiter.length;
    if (data.subarray(position, position + 2).toString() === '--') break;
    const headerEnd = data.indexOf('\r\n\r\n', position);
    const next = data.indexOf(delimiter, position);
    if (headerEnd < 0 || next < 0 || headerEnd > next) throw new BodyError('Bad Request: malformed multipart body');
    const headers = parseHeaders(data.subarray(position, headerEnd).toString('utf8'));
    const content = data.subarray(headerEnd + 4, next);
    const disposition = headers.get('content-disposition') ?? '';
    const name = dispositionParam(disposition, 'name');
    if (name === undefined) throw new BodyError('Bad Request: multipart part without a name');
    const fileName = dispositionParam(disposition, 'filename');
    if (fileName === undefined) {
      fields[name] = content.toString('utf8');
    } else {
      const bytes = Buffer.from(content);
      files.push({
        field: name,
        fileName,
        contentType: headers.get('content-type') ?? 'application/octet-stream',
        size: bytes.length,
        bytes,
      });
    }
    position = next;
  }
  return { fields, files };
}

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function dispositionParam(disposition: string, key: string): string | undefined {
  for (const part of disposition.split(';').slice(1)) {
    const equals = part.indexOf('=');
    if (equals < 0 || part.slice(0, equals).trim().toLowerCase() !== key) continue;
    const value = part.slice(equals + 1).trim();
    return value.startsWith('"') && value.endsWith('"') && value.length >= 2 ? value.slice(1, -1) : value;
  }
  return undefined;
}
