import { createSlackAdapter, type SlackAdapter, type SlackAdapterOptions } from '../../adapters/slack/slack-adapter.js';
import type { FakeSlack } from '../fakes/slack/index.js';

export type LogEntry = { level: string; fields: Record<string, unknown>; message: string };

/** A logger that keeps what the adapter logged, for tests to read. */
export function recordingLogger(logs: LogEntry[] = []) {
  return {
    logs,
    info: (fields: Record<string, unknown>, message: string) => void logs.push({ level: 'info', fields, message }),
    warn: (fields: Record<string, unknown>, message: string) => void logs.push({ level: 'warn', fields, message }),
    error: (fields: Record<string, unknown>, message: string) => void logs.push({ level: 'error', fields, message }),
  };
}

/** The real Slack adapter (Bolt, Socket Mode) against a fake Slack, with quick retries. */
export function slackAdapter(fake: FakeSlack, options: Partial<SlackAdapterOptions> = {}): SlackAdapter {
  return createSlackAdapter({
    botToken: fake.botToken,
    appToken: fake.appToken,
    apiUrl: fake.apiUrl,
    logger: recordingLogger(),
    retries: { retries: 2, minTimeout: 10, maxTimeout: 50 },
    ...options,
  });
}
