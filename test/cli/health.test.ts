import { afterEach, describe, expect, it } from 'vitest';
import { parseHobConfig } from '../../src/app/channels.js';
import { startHealth } from '../../src/cli/health.js';
import type { HealthServer } from '../../src/gateway/health.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { postgresSkipReason } from '../support/postgres.js';
import { postgresDatabase } from '../support/postgres-fixture.js';

/** GET /healthz as a load balancer sees it: 200 while the process serves, 503 with what is not. */

const quiet = { info() {}, warn() {}, error() {} };
let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The config as read from config.yaml, on a free port (the schema's ports start at 1). */
function configWith(store: string) {
  const config = parseHobConfig(`health: { port: 8080 }\n${store}`, { env: {} });
  return { ...config, health: { host: '127.0.0.1', port: 0 } };
}

async function get(path = '/healthz'): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`http://127.0.0.1:${server?.address.port}${path}`);
  return { status: response.status, body: response.headers.get('content-type') === 'application/json' ? await response.json() : await response.text() };
}

describe('/healthz', () => {
  it('answers 200 while the store is there and every channel is up, and 503 naming the channel that is down', async () => {
    const channel = new MemoryChannel();
    server = await startHealth(configWith(''), [channel], quiet, 'host-a:101');
    expect(await get()).toEqual({ status: 200, body: { ok: true, node: 'host-a:101', store: { kind: 'sqlite', reachable: true }, channels: { memory: 'up' } } });

    channel.down = 'refused for good: the token was revoked';
    expect(await get()).toEqual({ status: 503, body: { ok: false, node: 'host-a:101', store: { kind: 'sqlite', reachable: true }, channels: { memory: 'refused for good: the token was revoked' } } });
    expect((await get('/')).status).toBe(404);
  });

  it('answers 503 when the PostgreSQL store cannot be reached, without naming its password', async () => {
    server = await startHealth(configWith('store: { kind: postgres, url: "postgres://hob:s3cret-pw@127.0.0.1:1/hob" }\n'), [new MemoryChannel()], quiet, 'host-b:202');
    const answer = await get();
    expect(answer).toEqual({ status: 503, body: { ok: false, node: 'host-b:202', store: { kind: 'postgres', reachable: false }, channels: { memory: 'up' } } });
    expect(JSON.stringify(answer.body)).not.toContain('s3cret-pw');
  });

  it('is off without a health section', async () => {
    expect(await startHealth(parseHobConfig('', { env: {} }), [], quiet)).toBeUndefined();
  });

  it('says which key to change when its port is taken', async () => {
    const first = await startHealth(configWith(''), [], quiet);
    server = first;
    const port = first?.address.port;
    const taken = { ...configWith(''), health: { host: '127.0.0.1', port: port ?? 0 } };
    await expect(startHealth(taken, [], quiet)).rejects.toThrow(`health.port ${port} on 127.0.0.1 is taken (by a channel's port or another program): choose another health.port.`);
  });
});

describe.skipIf(postgresSkipReason)(`/healthz on PostgreSQL${postgresSkipReason ? ` (skipped: ${postgresSkipReason})` : ''}`, () => {
  const db = postgresDatabase();
  it('answers 200 when the database answers', async () => {
    server = await startHealth(configWith(`store: { kind: postgres, url: "${db.url}" }\n`), [new MemoryChannel()], quiet, 'host-c:303');
    expect(await get()).toMatchObject({ status: 200, body: { ok: true, store: { kind: 'postgres', reachable: true } } });
  });
});
