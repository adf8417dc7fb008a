import { createDiscordAdapter, type DiscordAdapter, type DiscordAdapterOptions } from '../../adapters/discord/discord-adapter.js';
import { startFakeDiscord, type FakeDiscord, type FakeDiscordOptions } from '../fakes/discord/index.js';

export type LogEntry = { level: string; fields: Record<string, unknown>; message: string };

/** A real Discord adapter against a fake, recording what it logs and its fatal sentence. */
export type DiscordBed = { fake: FakeDiscord; adapter: DiscordAdapter; logs: LogEntry[]; fatal: string[]; close(): Promise<void> };

export async function discordBed(fakeOptions: FakeDiscordOptions = {}, adapterOptions: Partial<DiscordAdapterOptions> = {}): Promise<DiscordBed> {
  const fake = await startFakeDiscord(fakeOptions);
  const logs: LogEntry[] = [];
  const fatal: string[] = [];
  const logger = {
    info: (fields: Record<string, unknown>, message: string) => void logs.push({ level: 'info', fields, message }),
    warn: (fields: Record<string, unknown>, message: string) => void logs.push({ level: 'warn', fields, message }),
    error: (fields: Record<string, unknown>, message: string) => void logs.push({ level: 'error', fields, message }),
  };
  const adapter = createDiscordAdapter({
    token: fake.token,
    apiUrl: fake.apiRoot,
    logger,
    liveEditIntervalMs: 50,
    onFatal: (sentence) => void fatal.push(sentence),
    ...adapterOptions,
  });
  return {
    fake,
    adapter,
    logs,
    fatal,
    close: async () => {
      await adapter.stop();
      await fake.close();
    },
  };
}
