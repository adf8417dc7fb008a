/**
 * One POST to an OpenAI-compatible audio endpoint, with plain fetch: a time limit, one retry
 * for what a retry can fix (429, 5xx, a dropped connection), a cap on the answer's size, and
 * the server's own reason read from whichever error shape it uses (OpenAI's
 * `{error:{message}}`, whisper.cpp's `{error:"…"}`, FastAPI's `{detail}` from
 * faster-whisper-server, or plain text) — with the key never in any message.
 */
import { isAbortError } from '../core/errors.js';
import { secondsText } from './measures.js';

export type EndpointRequest = {
  url: string;
  apiKey?: string;
  body: FormData | string;
  /** For a string body. */
  contentType?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** The answer is refused past this size. */
  maxResponseBytes: number;
};

export type EndpointAnswer = { status: number; contentType: string; body: Buffer };

/** Why a call failed: `status` for an HTTP answer, `timeout` or `network` when none came. */
export class EndpointError extends Error {
  override name = 'EndpointError';
  constructor(
    message: string,
    readonly failure: { status?: number; timeout?: boolean; network?: boolean; reason: string },
  ) {
    super(message);
  }
}

const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);
const REASON_CHARS = 300;

/** Resolves with a 2xx answer; throws EndpointError, or the AbortError of `signal` when it fired. */
export async function postToEndpoint(request: EndpointRequest): Promise<EndpointAnswer> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const answer = await postOnce(request);
      if (answer.status >= 200 && answer.status < 300) return answer;
      const reason = scrubKey(reasonOf(answer), request.apiKey);
      if (attempt === 1 && RETRY_STATUSES.has(answer.status)) {
        await pause(retryDelayMs(answer), request.signal);
        continue;
      }
      throw new EndpointError(`${answer.status} ${reason}`, { status: answer.status, reason });
    } catch (error) {
      if (error instanceof EndpointError) throw error;
      if (request.signal?.aborted) throw request.signal.reason ?? error;
      if (error instanceof Error && error.name === 'TimeoutError') {
        throw new EndpointError(`no answer within ${secondsText(request.timeoutMs)}`, { timeout: true, reason: 'timeout' });
      }
      const reason = scrubKey(networkReason(error), request.apiKey);
      if (reason.includes('unexpected redirect')) {
        throw new EndpointError(`${request.url} redirects elsewhere; set the base_url to where it redirects`, { network: true, reason: 'redirect' });
      }
      if (attempt === 1 && !isAbortError(error)) {
        await pause(500, request.signal);
        continue;
      }
      throw new EndpointError(reason, { network: true, reason });
    }
  }
}

async function postOnce(request: EndpointRequest): Promise<EndpointAnswer> {
  const headers: Record<string, string> = { accept: 'application/json, text/plain, audio/*' };
  if (request.apiKey) headers['authorization'] = `Bearer ${request.apiKey}`;
  if (typeof request.body === 'string') headers['content-type'] = request.contentType ?? 'application/json';
  const signals = [AbortSignal.timeout(request.timeoutMs), ...(request.signal ? [request.signal] : [])];
  // redirect "error": to be able to follow a redirect, fetch keeps every byte of the body
  // it sent (a 10-minute note: 19 MB held); an audio endpoint has no business redirecting a POST.
  const response = await fetch(request.url, { method: 'POST', headers, body: request.body, signal: AbortSignal.any(signals), redirect: 'error' });
  const contentType = response.headers.get('content-type') ?? '';
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > request.maxResponseBytes) {
    await response.body?.cancel();
    throw new EndpointError(`the answer is ${declared} bytes, more than the ${request.maxResponseBytes} hob reads`, { status: response.status, reason: 'answer too large' });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.length;
    if (size > request.maxResponseBytes) {
      throw new EndpointError(`the answer is more than the ${request.maxResponseBytes} bytes hob reads`, { status: response.status, reason: 'answer too large' });
    }
    chunks.push(Buffer.from(chunk));
  }
  return { status: response.status, contentType, body: Buffer.concat(chunks) };
}

/** The server's own words for a failure, whatever shape its error body has. */
export function reasonOf(answer: EndpointAnswer): string {
  const text = answer.body.toString('utf8').trim();
  let reason = text;
  try {
    const json: unknown = JSON.parse(text);
    reason = messageIn(json) ?? text;
  } catch {
    // Not JSON: plain text or an HTML page from a proxy.
    reason = text.replace(/<[^>]*>/g, ' ');
  }
  reason = reason.replace(/\s+/g, ' ').trim();
  if (!reason) return 'no reason given';
  return reason.length > REASON_CHARS ? `${reason.slice(0, REASON_CHARS - 1)}…` : reason;
}

function messageIn(json: unknown): string | undefined {
  if (typeof json === 'string') return json;
  if (typeof json !== 'object' || json === null) return undefined;
  const record = json as Record<string, unknown>;
  for (const key of ['error', 'detail', 'message']) {
    const value = record[key];
    if (typeof value === 'string') return value;
    if (Array.isArray(value)) return value.map((item) => messageIn(item) ?? (typeof item === 'object' && item !== null ? String((item as Record<string, unknown>)['msg'] ?? '') : '')).join('; ');
    if (typeof value === 'object' && value !== null) {
      const inner = messageIn(value);
      if (inner) return inner;
    }
  }
  return typeof record['msg'] === 'string' ? record['msg'] : undefined;
}

function networkReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const detail = cause instanceof Error ? ((cause as { code?: string }).code ?? cause.message) : undefined;
  return detail ? `${error.message} (${detail})` : error.message;
}

function retryDelayMs(answer: EndpointAnswer): number {
  return answer.status === 429 ? 2_000 : 500;
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });
}

/** A key never appears in a message, even when a server echoes it back. */
export function scrubKey(text: string, apiKey: string | undefined): string {
  if (!apiKey || apiKey.length < 4) return text;
  return text.split(apiKey).join('****');
}
