import { describe, expect, it } from 'vitest';
import { PostgresBridge } from '../../../src/store/postgres/bridge.js';
import { PostgresListener } from '../../../src/store/postgres/notifications.js';
import { postgresSkipReason } from '../../support/postgres.js';
import { postgresDatabase } from '../../support/postgres-fixture.js';

describe.skipIf(postgresSkipReason)(`LISTEN/NOTIFY between hob processes${postgresSkipReason ? ` (skipped: ${postgresSkipReason})` : ''}`, () => {
  const db = postgresDatabase();

  it('delivers a notification sent through the bridge only once its transaction commits, and not after the listener stops', async () => {
    const errors: Error[] = [];
    const listener = new PostgresListener({ url: db.url, onError: (error) => errors.push(error) });
    const heard: string[] = [];
    try {
      const stop = await listener.listen('approval decided', (payload) => heard.push(payload));
      db.bridge.transaction(() => {
        db.bridge.query('SELECT pg_notify($1, $2)', ['approval decided', 'ap_1:allow_once']);
        expect(() => db.bridge.transaction(() => {
          db.bridge.query('SELECT pg_notify($1, $2)', ['approval decided', 'rolled back']);
          throw new Error('no');
        })).toThrow('no');
      });
      await expect.poll(() => heard).toEqual(['ap_1:allow_once']);
      await stop();
      db.bridge.query('SELECT pg_notify($1, $2)', ['approval decided', 'ap_2:deny']);
      db.bridge.query('SELECT pg_notify($1, $2)', ['other', 'wakes the connection']);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(heard).toEqual(['ap_1:allow_once']);
      expect(errors).toEqual([]);
    } finally {
      await listener.close();
    }
  });

  it('comes back after the server drops its connection, says so without the password, and listens again', async () => {
    const errors: string[] = [];
    let reconnected = 0;
    const listener = new PostgresListener({ url: db.url, onError: (error) => errors.push(error.message), onReconnect: () => reconnected++, reconnectMs: 50 });
    const heard: string[] = [];
    try {
      await listener.listen('jobs', (payload) => heard.push(payload));
      const dropped = db.bridge.query("SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = 'hob-listen' AND datname = current_database()").rows;
      expect(dropped).toEqual([{ done: true }]);
      await expect.poll(() => reconnected, { timeout: 10_000 }).toBe(1);
      expect(errors).toEqual([expect.stringMatching(/^PostgreSQL at 127\.0\.0\.1:\d+ ended the connection \(terminating connection due to administrator command\); hob connects again\.$/)]);
      expect(errors.join('\n')).not.toContain(new URL(db.url).password);
      db.bridge.query('SELECT pg_notify($1, $2)', ['jobs', 'due']);
      await expect.poll(() => heard).toEqual(['due']);
    } finally {
      await listener.close();
    }
  });
});
