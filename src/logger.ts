import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';

export type Logger = pino.Logger;

/** Keys whose values never reach a log line. */
const REDACT = [
  'token',
  'apiKey',
  'api_key',
  'authorization',
  'secret_token',
  'bot_token',
  'app_token',
  'signing_secret',
  '*.token',
  '*.apiKey',
  '*.api_key',
  '*.authorization',
  '*.secret_token',
  '*.bot_token',
  '*.app_token',
  '*.signing_secret',
  'headers.authorization',
  'headers["x-api-key"]',
];

/**
 * Structured JSON logs to `data_dir/logs/hob.log` (the terminal belongs to the console
 * channel). Every line about a conversation carries its `session` key.
 */
export function createLogger(options: { dataDir?: string; level: string; destination?: 'file' | 'stderr' | 'silent' }): Logger {
  if (options.destination === 'silent' || options.level === 'silent') return pino({ level: 'silent' });
  if (options.destination === 'stderr' || !options.dataDir) {
    return pino({ level: options.level, redact: { paths: REDACT, censor: '[redacted]' } }, pino.destination(2));
  }
  const dir = join(options.dataDir, 'logs');
  mkdirSync(dir, { recursive: true });
  return pino(
    { level: options.level, redact: { paths: REDACT, censor: '[redacted]' } },
    pino.destination({ dest: join(dir, 'hob.log'), mkdir: true, sync: false }),
  );
}

/** Masks a secret for display: keeps a short prefix so people can tell keys apart. */
export function maskSecret(value: string): string {
  if (value.length <= 8) return '****';
  return `${value.slice(0, 4)}…${value.slice(-2)}`;
}

type FlushableStream = { fd?: number; flush?(cb: (error?: Error) => void): void; once?(event: string, listener: () => void): void };

/**
 * Waits until every log line is written, and never throws: a file destination that has not
 * opened its file yet (an exit right after start-up) is waited for first, since flushing it
 * then fails with "sonic boom is not ready yet".
 */
export async function flushLog(logger: Logger): Promise<void> {
  const stream = (logger as unknown as Record<symbol, FlushableStream | undefined>)[pino.symbols.streamSym];
  if (!stream?.flush) return;
  if (typeof stream.fd === 'number' && stream.fd < 0 && stream.once) {
    const once = stream.once.bind(stream);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2000);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      once('ready', done);
      once('error', done);
    });
  }
  await new Promise<void>((resolve) => {
    try {
      stream.flush?.(() => resolve());
    } catch {
      resolve();
    }
  });
}
