/**
 * issue 23: conversation leases on PostgreSQL, two stores standing for two processes. One
 * owner per conversation; a live owner keeps it; a dead one's conversation is taken with a
 * new epoch, and the old owner's writes to that conversation's history are then refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedConversations, LeaseLostError } from '../../src/gateway/cluster/fence.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { postgresSkipReason, testDatabase } from '../support/postgres.js';

const LEASE_MS = 60_000;
let a: PostgresStore;
let b: PostgresStore;

describe.skipIf(postgresSkipReason)('conversation leases', () => {
  beforeAll(async () => {
    const { url } = await testDatabase();
    a = openPostgresStore(url, { clock: { now: () => Date.now() } });
    b = openPostgresStore(url, { clock: { now: () => Date.now() } });
    a.cluster.join('node-a');
    b.cluster.join('node-b');
  });
  afterAll(() => {
    a?.close();
    b?.close();
  });

  it('gives a conversation to one live process, and to another once that one is dead; the old owner can no longer write it', () => {
    expect(a.cluster.acquire('chat:1', 'node-a', LEASE_MS)).toEqual({ kind: 'new', epoch: 1 });
    expect(b.cluster.acquire('chat:1', 'node-b', LEASE_MS)).toEqual({ kind: 'elsewhere', owner: 'node-a' });
    expect(a.cluster.acquire('chat:1', 'node-a', LEASE_MS)).toEqual({ kind: 'mine', epoch: 1 });
    const fencedA = new FencedConversations(a.conversations, () => true, (key) => {
      if (!a.cluster.holds(key, 'node-a', 1)) throw new LeaseLostError(key);
    }, (fn) => a.transaction(fn));
    const session = fencedA.activeSession('chat:1');
    fencedA.appendMessage(session.id, { role: 'user', content: [{ type: 'text', text: 'first' }] });

    // node-a goes silent past the lease: node-b buries it and takes the conversation with a new epoch.
    a.bridge.query("UPDATE nodes SET heartbeat_at = heartbeat_at - 120000 WHERE id = 'node-a'");
    expect(b.cluster.buryDead(LEASE_MS)).toEqual(['node-a']);
    expect(b.cluster.acquire('chat:1', 'node-b', LEASE_MS)).toEqual({ kind: 'taken', epoch: 2 });
    expect(b.cluster.orphans(['chat'], LEASE_MS, 10)).toEqual([]);

    expect(() => fencedA.appendMessage(session.id, { role: 'assistant', content: [{ type: 'text', text: 'stale' }] })).toThrow(LeaseLostError);
    expect(b.conversations.loadMessages(session.id).map((message) => message.content)).toEqual([[{ type: 'text', text: 'first' }]]);
    // heartbeat tells node-a it was taken for dead.
    expect(a.cluster.heartbeat('node-a')).toBe(false);
  });

  it('a stopping process hands its conversations over: they are free at once, their epoch kept', () => {
    b.cluster.acquire('chat:2', 'node-b', LEASE_MS);
    b.inbox.add({ platform: 'chat', updateId: 'u1', sessionKey: 'chat:2', message: '{}', now: Date.now() });
    a.cluster.join('node-a');
    expect(a.cluster.orphans(['chat'], LEASE_MS, 10)).toEqual([]);
    b.cluster.leave('node-b');
    expect(a.cluster.orphans(['chat'], LEASE_MS, 10)).toEqual(['chat:2']);
    expect(a.cluster.acquire('chat:2', 'node-a', LEASE_MS)).toEqual({ kind: 'taken', epoch: 2 });
    expect(a.cluster.acquire('chat:1', 'node-a', LEASE_MS)).toEqual({ kind: 'taken', epoch: 3 });
  });
});
