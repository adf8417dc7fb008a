import type { Clock } from '../core/clock.js';
import type { Logger } from '../logger.js';
import type { PairingRepository, PairingRow } from '../store/pairings.js';
import type { AccessControl } from './access.js';
import type { ButtonPress, ChannelAdapter, InboundMessage } from './channel.js';
import type { Delivery } from './delivery.js';

/** An unknown person who keeps writing hears their code again at most this often. */
const REMIND_AFTER_MS = 10 * 60_000;

/**
 * Pairing: an unknown DM sender gets a code; an owner approves it from the terminal
 * (`hob pairing approve CODE`), with `/pairing approve CODE`, or with the button hob sends
 * to the owner's DM. Codes expire.
 */
export class PairingService {
  /** When each unknown person was last sent their code: they are reminded, not flooded. */
  private readonly lastTold = new Map<string, number>();

  constructor(
    private readonly pairings: PairingRepository,
    private readonly access: AccessControl,
    private readonly delivery: Delivery,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async onUnknownSender(message: InboundMessage, pairing: PairingRow, isNew: boolean, adapter: ChannelAdapter): Promise<void> {
    const now = this.clock.now();
    const who = `${message.platform}:${message.userId}`;
    if (!isNew && now - (this.lastTold.get(who) ?? 0) < REMIND_AFTER_MS) return;
    this.lastTold.set(who, now);
    if (this.lastTold.size > 10_000) this.lastTold.delete(this.lastTold.keys().next().value as string);
    const minutes = Math.round((pairing.expiresAt - now) / 60_000);
    await this.delivery.send(message.platform, { chatId: message.chatId }, {
      text: `I don't know you yet. Your pairing code is ${pairing.code} (valid for ${minutes} min). Ask my owner to approve it, e.g. with: hob pairing approve ${pairing.code}`,
      plain: true,
    });
    if (!isNew) return;
    this.logger.info({ platform: message.platform, user: message.userId, code: pairing.code }, 'pairing requested');
    for (const owner of this.access.owners(message.platform)) {
      const target = (await adapter.directTarget?.(owner)) ?? { chatId: owner };
      await this.delivery.send(message.platform, target, {
        text: `${message.userName} (id ${message.userId}) wants to talk to hob. Pairing code ${pairing.code}.`,
        plain: true,
        buttons: [[{ label: `Approve ${message.userName}`, data: `pair:${pairing.code}` }]],
      });
    }
  }

  /** `pair:<code>` buttons; only owners may press. */
  async handlePress(press: ButtonPress, adapter: ChannelAdapter): Promise<boolean> {
    const match = /^pair:([A-Z0-9]{8})$/.exec(press.data);
    if (!match) return false;
    if (!this.access.isOwner(press.platform, press.userId)) {
      await press.answer('Only the owner can approve pairing requests.');
      return true;
    }
    const result = await this.approve(match[1] as string, press.userName);
    await press.answer(result);
    await adapter.edit(press.messageRef, { text: result, plain: true }).catch(() => undefined);
    return true;
  }

  async approve(code: string, decidedBy: string): Promise<string> {
    const row = this.pairings.approve(code, decidedBy, this.clock.now());
    if (!row) {
      const existing = this.pairings.byCode(code);
      if (!existing) return `No pairing request has the code ${code}.`;
      if (existing.status === 'approved') return `${existing.userName} is already approved.`;
      return `The code ${code} has expired or was revoked; ask ${existing.userName} to message hob again for a new one.`;
    }
    await this.delivery.send(row.platform, { chatId: row.chatId }, { text: "You're approved. Say hello!", plain: true });
    return `Approved ${row.userName} (id ${row.userId}).`;
  }

  async command(args: string, message: InboundMessage): Promise<string> {
    const [verb = 'list', value] = args.split(/\s+/).filter(Boolean);
    switch (verb) {
      case 'list': {
        const rows = this.pairings.list(this.clock.now()).filter((row) => row.platform === message.platform);
        if (!rows.length) return 'No pairing requests and no paired people.';
        return rows.map((row) => `${row.code} · ${row.userName} (id ${row.userId}) · ${row.status}`).join('\n');
      }
      case 'approve':
        return value ? this.approve(value.toUpperCase(), message.userName) : 'Usage: /pairing approve CODE';
      case 'revoke':
        if (!value) return 'Usage: /pairing revoke USER_ID';
        return this.pairings.revoke(message.platform, value, message.userName, this.clock.now())
          ? `Revoked access for user ${value}.`
          : `User ${value} has no pairing to revoke.`;
      default:
        return 'Usage: /pairing list | /pairing approve CODE | /pairing revoke USER_ID';
    }
  }
}
