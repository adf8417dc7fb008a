/** The cluster a store calls for: a node of several on PostgreSQL, or the one process on SQLite. */
import { errorMessage } from '../../core/errors.js';
import type { Logger } from '../../logger.js';
import { postgresUrl, type StoreSettings } from '../../store/open.js';
import { PostgresListener } from '../../store/postgres/notifications.js';
import type { Store } from '../../store/store.js';
import { LocalCluster, type Cluster } from './cluster.js';
import { NodeCluster } from './node-cluster.js';

export function openCluster(options: { store: Store; settings: StoreSettings; leaseMs: number; logger: Logger }): Cluster {
  const { store, logger } = options;
  const repo = store.cluster;
  if (!repo) return new LocalCluster();
  const notifications = new PostgresListener({
    url: postgresUrl(options.settings),
    // A notification missed while the connection was down is found by the next heartbeat's look for work.
    onError: (error) => logger.warn({ err: errorMessage(error) }, 'cluster: the notification connection to PostgreSQL failed; reconnecting'),
  });
  return new NodeCluster({ repo, transaction: (fn) => store.transaction(fn), notifications, leaseMs: options.leaseMs, logger });
}
