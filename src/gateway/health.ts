/**
 * `GET /healthz`: whether this process serves, for a load balancer, a supervisor or a person
 * with curl. 200 with a small JSON when the store answers and every channel is up, 503 with
 * the same JSON (saying what is not) otherwise. It never names a secret or a person.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChannelLogger } from './channel-module.js';

/** What /healthz answers. `channels` maps each configured channel to "up" or why it is not. */
export type HealthReport = {
  ok: boolean;
  /** Which process answered (host:pid, or the node id of several processes). */
  node: string;
  store: { kind: string; reachable: boolean };
  channels: Record<string, string>;
};

export type HealthSources = {
  node: string;
  storeKind: string;
  /** Resolves false (never throws) when the store cannot be reached now. */
  storeReachable(): Promise<boolean>;
  /** The channels this process runs: `down` says why one does not serve now, undefined while it does. */
  channels(): readonly { platform: string; down?: string | undefined }[];
};

export async function healthReport(sources: HealthSources): Promise<HealthReport> {
  const reachable = await sources.storeReachable().catch(() => false);
  const channels = Object.fromEntries(sources.channels().map((channel) => [channel.platform, channel.down ?? 'up']));
  return {
    ok: reachable && Object.values(channels).every((state) => state === 'up'),
    node: sources.node,
    store: { kind: sources.storeKind, reachable },
    channels,
  };
}

export type HealthServer = { readonly address: AddressInfo; close(): Promise<void> };

/** Listens on `host:port` (port 0: a free one) and answers GET /healthz; every other path is 404. */
export async function startHealthServer(options: { host: string; port: number; sources: HealthSources; logger: ChannelLogger }): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/healthz') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found; the health endpoint is GET /healthz\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    healthReport(options.sources).then(
      (report) => {
        res.writeHead(report.ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : `${JSON.stringify(report)}\n`);
      },
      (error: unknown) => {
        options.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'health check failed');
        res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    address: server.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
