import { afterEach, beforeEach } from 'vitest';
import { createTelegramAdapter, type TelegramAdapter, type TelegramAdapterOptions } from '../../adapters/telegram/telegram-adapter.js';
import { startFakeTelegram, type FakeTelegram, type FakeTelegramOptions } from '../fakes/telegram/index.js';

/**
 * Per test: a fresh fake Bot API, the real adapters made against it (stopped afterwards), and
 * what they logged. Import `fake`, `logs` and `adapter` — live bindings, renewed before each
 * test — and call `useTelegramTestbed()` once at the top of the test file.
 */

export type LogEntry = { level: string; fields: Record<string, unknown>; message: string };

export let fake: FakeTelegram;
export let logs: LogEntry[] = [];
let adapters: TelegramAdapter[] = [];

export const logger = {
  info: (fields: Record<string, unknown>, message: string) => void logs.push({ level: 'info', fields, message }),
  warn: (fields: Record<string, unknown>, message: string) => void logs.push({ level: 'warn', fields, message }),
  error: (fields: Record<string, unknown>, message: string) => void logs.push({ level: 'error', fields, message }),
};

/** A real Telegram adapter against this test's fake. */
export function adapter(options: Partial<TelegramAdapterOptions> = {}): TelegramAdapter {
  const created = createTelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot, logger, autoRetryMaxDelaySeconds: 5, ...options });
  adapters.push(created);
  return created;
}

export function useTelegramTestbed(options: () => FakeTelegramOptions = () => ({ botUsername: 'hob_test_bot' })): void {
  beforeEach(async () => {
    fake = await startFakeTelegram(options());
    adapters = [];
    logs = [];
  });
  afterEach(async () => {
    for (const telegram of adapters) await telegram.stop();
    await fake.close();
  });
}
