import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../logger.js';
import type { ApprovalRequest, Decision } from '../policy/types.js';
import type { ApprovalDecisionValue, ApprovalRepository, ApprovalRow } from '../store/approvals.js';
import type { SharedDecisions } from '../store/shared-decisions.js';
import type { ButtonPress, ChannelAdapter, OutboundMessage, SentRef, Target } from './channel.js';
import type { Delivery } from './delivery.js';

/** Where an approval is asked: the chat of the run and the person who started it. */
export type ApprovalSite = {
  adapter: ChannelAdapter;
  target: Target;
  requesterName: string;
};

type Waiter = { resolve(decision: Decision): void };

/** Longest command or path shown inline; longer ones are attached whole as a file. */
const INLINE_LIMIT = 1500;

const CHOICE_CODES: Record<string, Decision> = { o: 'allow_once', a: 'allow_always', d: 'deny' };

/**
 * Approvals as buttons. Each request is a row in SQLite (who asked, the full input, expiry,
 * decision, who decided); the chat gets Allow once / Always allow / Deny buttons whose data
 * carries only the id. Only the requester or an owner may decide, once; timeout means deny.
 *
 * With several processes on one database (`shared`), a press may reach a process that is
 * not running the conversation: it decides in the database by the same rules, and the
 * process whose run waits is woken by the database's notice (`woken`).
 */
export class ApprovalBroker {
  private readonly waiters = new Map<string, Waiter>();

  constructor(
    private readonly repo: ApprovalRepository,
    private readonly delivery: Delivery,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: {
      timeoutSeconds: number;
      isOwner(platform: string, userId: string): boolean;
      /** On the allow list (or paired). Someone who may talk only because a group is allowed may not approve their own calls. */
      isAllowed(platform: string, userId: string): boolean;
      /** Several processes on one database: decisions for runs waiting elsewhere (absent with SQLite). */
      shared?: SharedDecisions;
    },
  ) {}

  /** A decision was taken in some process: the run waiting here for it, if any, goes on. */
  woken(id: string): void {
    const waiter = this.waiters.get(id);
    const decision = waiter && this.repo.get(id)?.decision;
    if (waiter && decision) waiter.resolve(asDecision(decision));
  }

  /** After the notices' connection came back: those sent meanwhile were lost, so every waiting approval is read again. */
  recheck(): void {
    for (const id of [...this.waiters.keys()]) this.woken(id);
  }

  /** Asks in the chat and waits for a decision. Never throws; failures deny. */
  async confirm(site: ApprovalSite, request: ApprovalRequest, signal: AbortSignal): Promise<Decision> {
    const id = `a${randomBytes(5).toString('hex')}`;
    const now = this.clock.now();
    const expiresAt = now + this.options.timeoutSeconds * 1000;
    const platform = site.adapter.platform;
    this.repo.insert({
      id,
      sessionKey: request.sessionKey,
      toolUseId: request.toolUseId,
      requesterId: request.requesterId,
      platform,
      chatId: site.target.chatId,
      threadId: site.target.threadId ?? null,
      toolName: request.toolName,
      input: JSON.stringify(request.input ?? null),
      summary: request.summary,
      createdAt: now,
      expiresAt,
    });
    const decided = new Promise<Decision>((resolve) => this.waiters.set(id, { resolve }));
    await this.delivery.send(platform, site.target, this.prompt(id, request, site), request.sessionKey, {
      recorded: (outboxId) => this.repo.setOutbox(id, outboxId),
      // Also when the first send failed and the outbox delivered the prompt later.
      sent: (ref) =>
        void this.promptDelivered(id, ref, site.adapter).catch((error: unknown) =>
          this.logger.warn({ session: request.sessionKey, approval: id, err: String(error) }, 'could not record the approval message'),
        ),
    });

    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<Decision>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.options.timeoutSeconds * 1000);
    });
    const aborted = new Promise<Decision>((resolve) => {
      if (signal.aborted) resolve('deny');
      signal.addEventListener('abort', () => resolve('deny'), { once: true });
    });
    let decision = await Promise.race([decided, timedOut, aborted]);
    clearTimeout(timer);
    this.waiters.delete(id);
    if (decision === 'timeout' || signal.aborted) {
      const outcome: ApprovalDecisionValue = decision === 'timeout' ? 'timeout' : 'cancelled';
      if (this.repo.decide(id, outcome, 'hob', this.clock.now())) await this.close(site.adapter, this.repo.get(id));
      // Decided in another process just before the timer ran out (its notice not yet here): the stored decision holds.
      else if (decision === 'timeout') decision = asDecision(this.repo.get(id)?.decision ?? 'timeout');
      if (decision === 'timeout') this.logger.info({ session: request.sessionKey, approval: id }, 'approval timed out');
    }
    return signal.aborted ? 'deny' : decision;
  }

  /** A button press with data `ap:<id>:<o|a|d>`. Returns false when the data is not an approval. */
  async handlePress(press: ButtonPress, adapter: ChannelAdapter): Promise<boolean> {
    const match = /^ap:([a-z0-9]+):([oad])$/.exec(press.data);
    if (!match) return false;
    const [, id, code] = match as unknown as [string, string, string];
    const closedBefore = Boolean(this.repo.get(id)?.decision);
    const message = await this.decide(id, CHOICE_CODES[code] as Decision, press.platform, press.userId, press.userName, adapter);
    await press.answer(message);
    await this.closePressedPrompt(id, press, adapter, closedBefore);
    return true;
  }

  /** The text fallback: `/approve ID` and `/deny ID`. Returns the reply for the person. */
  decideByText(id: string, decision: 'allow_once' | 'deny', platform: string, userId: string, userName: string, adapter: ChannelAdapter): Promise<string> {
    return this.decide(id, decision, platform, userId, userName, adapter);
  }

  /**
   * After a restart no run waits for the pending approvals: they are closed (their messages
   * say so) and the tool calls they guarded are reported per conversation as never run.
   */
  async recoverAfterRestart(adapters: Map<string, ChannelAdapter>, keys?: ReadonlySet<string>): Promise<Map<string, Set<string>>> {
    const notStarted = new Map<string, Set<string>>();
    for (const row of this.repo.pending()) {
      // issue 23: a takeover closes only the conversations it took; the others wait in their own processes.
      if (keys && !keys.has(row.sessionKey)) continue;
      if (!this.repo.decide(row.id, 'cancelled', 'restart', this.clock.now())) continue;
      const calls = notStarted.get(row.sessionKey) ?? new Set<string>();
      calls.add(row.toolUseId);
      notStarted.set(row.sessionKey, calls);
      const adapter = adapters.get(row.platform);
      if (adapter) await this.close(adapter, this.repo.get(row.id));
    }
    return notStarted;
  }

  /**
   * issue 7: a press on a closed approval whose prompt still has buttons (hob was killed
   * before it learnt the prompt's id, or the edit failed): the pressed message is the prompt,
   * so it is edited now to show the outcome, without buttons.
   */
  private async closePressedPrompt(id: string, press: ButtonPress, adapter: ChannelAdapter, closedBefore: boolean): Promise<void> {
    const row = this.repo.get(id);
    if (!row?.decision || row.platform !== press.platform || row.chatId !== press.chatId) return;
    // Decided by this very press on a prompt hob knew: decide() has edited it already.
    if (!closedBefore && row.messageId === press.messageRef.messageId) return;
    if (!row.messageId) this.repo.setMessage(id, press.messageRef.messageId);
    await this.showOutcome(adapter, { ...row, messageId: press.messageRef.messageId });
  }

  /** The prompt reached the chat; a press can land before that is known, so show its outcome now. */
  private async promptDelivered(id: string, ref: SentRef, adapter: ChannelAdapter): Promise<void> {
    this.repo.setMessage(id, ref.messageId);
    const row = this.repo.get(id);
    if (row?.decision) await this.showOutcome(adapter, row);
  }

  /** A closed approval: its prompt is edited to say so, or withdrawn if it never went out. */
  private async close(adapter: ChannelAdapter, row: ApprovalRow | undefined): Promise<void> {
    if (!row) return;
    if (!row.messageId && row.outboxId !== null) this.delivery.cancel(row.outboxId, `approval ${row.id} closed before its prompt was delivered`);
    await this.showOutcome(adapter, row);
  }

  private async decide(id: string, decision: Decision, platform: string, userId: string, userName: string, adapter: ChannelAdapter): Promise<string> {
    const row = this.repo.get(id);
    if (!row || row.platform !== platform) return 'There is no such approval request.';
    const mayDecide = this.options.isOwner(platform, userId) || (row.requesterId === userId && this.options.isAllowed(platform, userId));
    if (!mayDecide) {
      return row.requesterId === userId
        ? 'Only an owner can approve this: you may talk to hob in this group, but not approve what it runs.'
        : 'This approval is not yours: only the person who asked, or an owner, can decide.';
    }
    if (row.decision) return `This request was already closed: ${describe(row.decision)}${row.decidedBy && row.decidedBy !== 'hob' ? ` by ${row.decidedBy}` : ''}.`;
    if (row.expiresAt <= this.clock.now()) {
      this.repo.decide(id, 'timeout', 'hob', this.clock.now());
      await this.close(adapter, this.repo.get(id));
      return 'This request has expired.';
    }
    const waiter = this.waiters.get(id);
    const { shared } = this.options;
    if (!waiter && !shared) {
      this.repo.decide(id, 'cancelled', 'restart', this.clock.now());
      await this.close(adapter, this.repo.get(id));
      return 'This request is no longer active.';
    }
    // No run waits here: with several processes the one that waits is woken by the decision's notice.
    const decided = waiter ? this.repo.decide(id, decision, userName, this.clock.now()) : shared?.decideApproval(id, decision, userName, this.clock.now());
    if (!decided) return 'This request was already decided.';
    waiter?.resolve(decision);
    this.logger.info({ session: row.sessionKey, approval: id, decision, by: userId, ...(waiter ? {} : { waitsElsewhere: true }) }, 'approval decided');
    await this.showOutcome(adapter, this.repo.get(id));
    return `${describe(decision)[0]?.toUpperCase()}${describe(decision).slice(1)}.`;
  }

  private prompt(id: string, request: ApprovalRequest, site: ApprovalSite): OutboundMessage {
    const minutes = Math.max(1, Math.round(this.options.timeoutSeconds / 60));
    const long = request.summary.length > INLINE_LIMIT;
    const shown = long
      ? `The full ${request.toolName === 'bash' ? 'command' : 'input'} (${request.summary.length} characters) is attached as approval-${id}.txt.`
      : fenced(request.summary);
    return {
      text: [
        request.worker ? `🔐 **${request.worker}** (a worker) wants to run **${request.toolName}**. Allow?` : `🔐 Allow **${request.toolName}**?`,
        shown,
        `${request.reason}. Asked by ${site.requesterName}; ${this.options.isAllowed(site.adapter.platform, request.requesterId) ? 'only they or an owner can decide' : 'only an owner can decide'}. Expires in ${minutes} min. (Text: /approve ${id} or /deny ${id})`,
      ].join('\n'),
      buttons: [
        [
          { label: 'Allow once', data: `ap:${id}:o` },
          { label: 'Always allow', data: `ap:${id}:a` },
          { label: 'Deny', data: `ap:${id}:d` },
        ],
      ],
      ...(long ? { file: { name: `approval-${id}.txt`, data: Buffer.from(request.summary), caption: `Full input for approval ${id}` } } : {}),
    };
  }

  private async showOutcome(adapter: ChannelAdapter, row: ApprovalRow | undefined): Promise<void> {
    if (!row?.messageId || !row.decision) return;
    const long = row.summary.length > INLINE_LIMIT;
    const ref: SentRef = { chatId: row.chatId, messageId: row.messageId, ...(row.threadId ? { threadId: row.threadId } : {}), ...(long ? { isFile: true } : {}) };
    const who = row.decidedBy && !['hob', 'restart'].includes(row.decidedBy) ? ` by ${row.decidedBy}` : '';
    const icon = row.decision === 'allow_once' || row.decision === 'allow_always' ? '✅' : row.decision === 'timeout' ? '⌛' : '❌';
    const body = long ? `(input attached as approval-${row.id}.txt)` : fenced(row.summary);
    try {
      await adapter.edit(ref, { text: `${icon} **${row.toolName}**: ${describe(row.decision)}${who}.\n${body}` });
    } catch (error) {
      this.logger.warn({ session: row.sessionKey, approval: row.id, err: String(error) }, 'could not edit the approval message');
    }
  }
}

/** What the waiting run makes of a stored decision: a run stopped elsewhere is a no. */
function asDecision(value: ApprovalDecisionValue): Decision {
  return value === 'cancelled' ? 'deny' : value;
}

function describe(decision: ApprovalDecisionValue): string {
  switch (decision) {
    case 'allow_once':
      return 'allowed once';
    case 'allow_always':
      return 'always allowed';
    case 'deny':
      return 'denied';
    case 'timeout':
      return 'timed out with no answer, so denied';
    case 'cancelled':
      return 'cancelled (the run stopped or hob restarted)';
  }
}

/** A code block that cannot be broken by backticks inside the content. */
function fenced(content: string): string {
  const longest = Math.max(2, ...[...content.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}\n${content}\n${fence}`;
}
