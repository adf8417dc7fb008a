import type { HobConfig } from '../config/schema.js';
import { systemClock } from '../core/clock.js';
import { UserFacingError } from '../core/errors.js';
import { openStore } from '../store/open.js';
import { encodeOutboxMessage } from '../store/outbox-message.js';
import { configuredChannels } from '../app/channels.js';

/**
 * `hob pairing list | approve CODE | revoke USER_ID` — works on the store directly, so it
 * also works while `hob start` runs; the approved person's welcome goes out through the
 * outbox, which the running gateway delivers.
 */
export function runPairing(config: HobConfig, verb: string, value: string | undefined, platform: string | undefined, out: NodeJS.WritableStream = process.stdout): void {
  const store = openStore({ dataDir: config.data_dir, store: config.store }, { clock: systemClock });
  const pairings = store.pairings;
  const now = systemClock.now();
  try {
    switch (verb) {
      case 'list': {
        const rows = pairings.list(now);
        if (!rows.length) return void out.write('No pairing requests and no paired people.\n');
        for (const row of rows) {
          const expires = row.status === 'pending' ? ` (expires in ${Math.round((row.expiresAt - now) / 60_000)} min)` : '';
          out.write(`${row.code}  ${row.platform}  ${row.userName} (id ${row.userId})  ${row.status}${expires}\n`);
        }
        return;
      }
      case 'approve': {
        if (!value) throw new UserFacingError('Usage: hob pairing approve CODE');
        const row = pairings.approve(value, 'cli', now);
        if (!row) {
          const existing = pairings.byCode(value);
          throw new UserFacingError(
            existing ? `The code ${value.toUpperCase()} is ${existing.status === 'pending' ? 'expired' : existing.status}.` : `No pairing request has the code ${value.toUpperCase()}. See \`hob pairing list\`.`,
          );
        }
        store.outbox.add({ platform: row.platform, chatId: row.chatId, message: encodeOutboxMessage({ text: "You're approved. Say hello!", plain: true }), now });
        return void out.write(`Approved ${row.userName} (id ${row.userId}) on ${row.platform}.\n`);
      }
      case 'revoke': {
        if (!value) throw new UserFacingError(`Usage: hob pairing revoke USER_ID --platform ${platformChoices(config)}`);
        const where = platform ?? onlyChannel(config);
        const changed = pairings.revoke(where, value, 'cli', now);
        if (!changed) throw new UserFacingError(`User ${value} has no pairing on ${where}.`);
        return void out.write(`Revoked ${where} user ${value}.\n`);
      }
      default:
        throw new UserFacingError('Usage: hob pairing list | approve CODE | revoke USER_ID');
    }
  } finally {
    store.close();
  }
}

/** A user id is per platform: with one chat channel configured it is that one, otherwise `--platform` must say. */
function onlyChannel(config: HobConfig): string {
  const configured = configuredChannels(config);
  if (configured.length === 1) return (configured[0] as (typeof configured)[number]).module.name;
  throw new UserFacingError(`Which platform is the user on? Add --platform ${platformChoices(config)}.`);
}

function platformChoices(config: HobConfig): string {
  const configured = configuredChannels(config).map(({ module }) => module.name);
  return configured.length ? configured.join('|') : 'NAME';
}
