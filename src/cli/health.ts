/**
 * `health: { port, host }` → GET /healthz (src/gateway/health.ts) for this process: its store
 * (SQLite is a local file, always there; PostgreSQL is asked on a short connection) and the
 * channels it runs. Absent section: nothing listens.
 */
import { hostname } from 'node:os';
import { errorMessage, UserFacingError } from '../core/errors.js';
import type { HobConfig } from '../config/schema.js';
import type { ChannelAdapter } from '../gateway/channel.js';
import type { ChannelLogger } from '../gateway/channel-module.js';
import { startHealthServer, type HealthServer } from '../gateway/health.js';
import { postgresUrl } from '../store/settings.js';

export async function startHealth(config: HobConfig, adapters: readonly ChannelAdapter[], logger: ChannelLogger, node = `${hostname()}:${process.pid}`): Promise<HealthServer | undefined> {
  const health = config.health;
  if (!health) return undefined;
  const settings = { dataDir: config.data_dir, store: config.store };
  const url = config.store.kind === 'postgres' ? postgresUrl(settings) : undefined;
  try {
    return await startHealthServer({
      host: health.host,
      port: health.port,
      logger,
      sources: {
        node,
        storeKind: config.store.kind,
        // PostgreSQL's probe (and pg) load with the first check that needs them.
        storeReachable: async () => (url === undefined ? true : (await import('../store/postgres/probe.js')).postgresAnswers(url)),
        channels: () => adapters,
      },
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EADDRINUSE') throw new UserFacingError(`health.port ${health.port} on ${health.host} is taken (by a channel's port or another program): choose another health.port.`);
    throw new UserFacingError(`The health endpoint could not listen on ${health.host}:${health.port} (${errorMessage(error)}): check health.host and health.port.`);
  }
}
