import { describe, expect, it } from 'vitest';
import { telegramChannel } from '../../adapters/telegram/index.js';
import type { ConfiguredChannel } from '../../src/app/channels.js';
import { claimSingleConsumers } from '../../src/cli/single-consumers.js';
import { postgresSkipReason } from '../support/postgres.js';
import { postgresDatabase } from '../support/postgres-fixture.js';

/** Two `hob start` processes on one PostgreSQL store, as far as which channels each starts. */

const token = '123456789:AAE-fake-token_for_tests';
const polling: ConfiguredChannel = { module: telegramChannel, section: telegramChannel.configSchema.parse({ token, allow_from: ['42'] }) };
const webhook: ConfiguredChannel = {
  module: telegramChannel,
  section: telegramChannel.configSchema.parse({ token, allow_from: ['42'], webhook: { url: 'https://hob.example.com/telegram', secret_token: 'team-secret_1' } }),
};

describe.skipIf(postgresSkipReason)(`channels only one process may receive${postgresSkipReason ? ` (skipped: ${postgresSkipReason})` : ''}`, () => {
  const db = postgresDatabase();
  const settings = () => ({ dataDir: '/unused', store: { kind: 'postgres' as const, url: db.url } });

  it('a second process does not long-poll the same bot: it says why and names webhook mode; once the first stops, the next may', async () => {
    const first = await claimSingleConsumers([polling], settings(), () => {});
    expect(first.kept).toEqual([polling]);
    const second = await claimSingleConsumers([polling], settings(), () => {});
    expect(second.kept).toEqual([]);
    expect(second.refused).toEqual([expect.stringMatching(/^Telegram: another hob process already long-polls this bot \(123456789\).*channels\.telegram\.webhook/)]);
    expect(second.refused[0]).not.toContain(token);

    await first.release();
    const third = await claimSingleConsumers([polling], settings(), () => {});
    expect(third.kept).toEqual([polling]);
    await third.release();
  });

  it('in webhook mode every process serves the bot', async () => {
    const claims = [await claimSingleConsumers([webhook], settings(), () => {}), await claimSingleConsumers([webhook], settings(), () => {})];
    expect(claims.map((claim) => claim.kept)).toEqual([[webhook], [webhook]]);
    for (const claim of claims) await claim.release();
  });
});

describe('channels only one process may receive, on SQLite', () => {
  it('takes no lock: one process owns the data dir', async () => {
    const claim = await claimSingleConsumers([polling], { dataDir: '/unused' }, () => {});
    expect(claim).toMatchObject({ kept: [polling], refused: [] });
  });
});
