/**
 * Channels only one process may receive at a time (ChannelModule.singleConsumer), among
 * several `hob start` processes on one PostgreSQL store: each such channel is started only by
 * the process that holds its advisory lock (session-level, on a connection of its own, so it
 * goes the moment that process stops or dies). Another process leaves the channel out and
 * says why in the channel's own words. On SQLite one process owns the data dir: no lock.
 */
import type { StoreSettings } from '../store/open.js';
import type { ConfiguredChannel } from '../app/channels.js';

export type SingleConsumerClaim = {
  /** The channels this process starts. */
  kept: ConfiguredChannel[];
  /** One sentence per channel left out (another process receives it). */
  refused: string[];
  /** Lets the locks go (at stop). */
  release(): Promise<void>;
};

export async function claimSingleConsumers(
  channels: ConfiguredChannel[],
  settings: StoreSettings,
  report: (sentence: string) => void,
): Promise<SingleConsumerClaim> {
  const single = channels.map((channel) => ({ channel, consumer: channel.module.singleConsumer?.(channel.section) }));
  if (settings.store?.kind !== 'postgres' || single.every(({ consumer }) => consumer === undefined)) {
    return { kept: channels, refused: [], release: async () => {} };
  }
  // Loaded only here: on SQLite `hob start` never pays for the PostgreSQL client.
  const [{ PostgresAdvisoryLocks }, { postgresUrl }] = await Promise.all([import('../store/postgres/advisory-locks.js'), import('../store/open.js')]);
  const locks = new PostgresAdvisoryLocks({
    url: postgresUrl(settings),
    onLost: (error) => report(`${error.message} The channels only one process may receive are no longer reserved for this one.`),
  });
  const kept: ConfiguredChannel[] = [];
  const refused: string[] = [];
  for (const { channel, consumer } of single) {
    if (consumer === undefined || (await locks.tryHold(consumer.key))) kept.push(channel);
    else refused.push(consumer.refusal);
  }
  if (refused.length === single.filter(({ consumer }) => consumer !== undefined).length) {
    // Holding no lock, the connection has nothing to keep.
    await locks.close();
    return { kept, refused, release: async () => {} };
  }
  return { kept, refused, release: () => locks.close() };
}
