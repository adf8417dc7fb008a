/** The cluster a store calls for: a node of several on PostgreSQL, or the one process on SQLite. */
import { errorMessage } from '../../core/errors.js';
import type { Logger } from '../../logger.js';
import { postgresUrl, type StoreSettings } from '../../store/settings.js';
import type { Store } from '../../store/store.js';
import { LocalCluster, type Cluster } from './cluster.js';
import { NodeCluster } from './node-cluster.js';

export async function openCluster(options: { store: Store; settings: StoreSettings; leaseMs: number; logger: Logger }): Promise<Cluster> {
  const { store, logger } = options;
  const repo = store.cluster;
  if (!repo) return new LocalCluster();
  // Loaded here, with PostgreSQL: a SQLite start does without its code.
  const { PostgresListener } = await import('../../store/postgres/notifications.js');
  const notifications = new PostgresListener({
    url: postgresUrl(options.settings),
    // A notification missed while the connection was down is found by the next heartbeat's look for work.
    onError: (error) => logger.warn({ err: errorMessage(error) }, 'cluster: the notification connection to PostgreSQL failed; reconnecting'),
  });
  return new NodeCluster({ repo, transaction: (fn) => store.transaction(fn), notifications, leaseMs: options.leaseMs, logger });
}
