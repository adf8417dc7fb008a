import { afterAll, beforeAll } from 'vitest';
import { PostgresBridge } from '../../src/store/postgres/bridge.js';
import { testDatabase, type Cluster } from './postgres.js';

/**
 * In a describe block: this file's fresh database on the run's cluster and a bridge to it
 * (closed after the block). Read the fields inside tests; they are set before the first.
 */
export function postgresDatabase(): { url: string; cluster: Cluster; bridge: PostgresBridge } {
  const fixture = {} as { url: string; cluster: Cluster; bridge: PostgresBridge };
  // The first file of a run starts the cluster: longer than the default on a loaded machine.
  beforeAll(async () => {
    Object.assign(fixture, await testDatabase());
    fixture.bridge = new PostgresBridge({ url: fixture.url });
  }, 90_000);
  afterAll(() => fixture.bridge?.close());
  return fixture;
}
