/**
 * What a restart left, taken up before hob listens again: sends the previous process had
 * leased are due again and its live messages settled (before anything new is sent); pending
 * approvals are closed and the runs they held resume, told which tool calls never ran; runs
 * cut off mid-way resume; messages still queued in the inbox are queued again, in order, the
 * parts of one paste or album together.
 *
 * issue 23: with several processes on one database, a process takes over only the
 * conversations whose process stopped or died (`keys`): the same steps for those alone, the
 * sends of that process already released with its node (gateway/cluster/).
 */
import { oneLine } from '../core/text.js';
import { isTaskSession } from '../engine/tasks/notification.js';
import type { ConversationRepository } from '../store/conversations.js';
import type { InboxRepository, QueuedInbound } from '../store/inbox.js';
import type { ApprovalBroker } from './approvals.js';
import type { ChannelAdapter, ChatType } from './channel.js';
import type { Conversation } from './conversation.js';
import type { Delivery } from './delivery.js';
import { targetOf } from './inbound-reply.js';
import type { OpenConversation } from './pool.js';
import { placeOfKey } from './session-key.js';
import { readInbound, restoreParts, type StoredInbound } from './stored-inbound.js';

export type RestartDeps = {
  conversations: Pick<ConversationRepository, 'pendingWork'>;
  /** Of queued inbox rows, those not queued in this process yet (issue 23's cluster keeps count; one process: all). */
  unseen<Row extends { id: number }>(key: string, rows: Row[]): Row[];
  inbox: InboxRepository;
  delivery: Delivery;
  broker: ApprovalBroker;
  adapters: Map<string, ChannelAdapter>;
  conversation: OpenConversation;
  /** issue 23: runs a chat command another process stored for a conversation this one runs (its row is done already). */
  command?(key: string, stored: StoredInbound, adapter: ChannelAdapter): void;
};

type RequeueDeps = Pick<RestartDeps, 'adapters' | 'conversation' | 'delivery' | 'inbox' | 'command'>;

export async function recoverAfterRestart(deps: RestartDeps, keys?: ReadonlySet<string>): Promise<void> {
  // First: what the previous process leased is due again, its live messages settled, before anything new is sent.
  if (keys) deps.delivery.takeLeftLive(keys);
  else deps.delivery.releaseLeases();
  await deps.delivery.settleLeftLive();
  const notStarted = await deps.broker.recoverAfterRestart(deps.adapters, keys);
  for (const key of deps.conversations.pendingWork()) {
    // A background task's run is the task manager's to resume, not a chat's.
    if (isTaskSession(key) || (keys && !keys.has(key))) continue;
    const found = conversationForKey(deps, key);
    found?.conversation.resume(found.requesterId, notStarted.get(key) ?? new Set());
  }
  if (keys) for (const key of keys) requeueRows(deps, deps.unseen(key, deps.inbox.queuedFor(key)));
  else requeueRows(deps, deps.inbox.queued());
}

/** Another process stored messages for a conversation this one runs: those not queued here yet are queued, in order. */
export function pullInbox(deps: RequeueDeps & Pick<RestartDeps, 'unseen'>, key: string): void {
  requeueRows(deps, deps.unseen(key, deps.inbox.queuedFor(key)));
}

/** Rebuilds a conversation from its key alone, and who its cut-off run was for. */
function conversationForKey(deps: RestartDeps, key: string): { conversation: Conversation; requesterId: string } | undefined {
  const place = placeOfKey(key);
  const adapter = place ? deps.adapters.get(place.platform) : undefined;
  if (!place || !adapter) return undefined;
  const { chatId, threadId, userId: user } = place;
  // Who spoke last, and where, is in the inbox; else a per-person key names them, and a DM's chat is the person.
  const latest = deps.inbox.latestFor(key);
  const last = latest ? readInbound(latest) : undefined;
  const chatType: ChatType = last?.chatType ?? (user ? 'group' : 'dm');
  const requesterId = last?.userId ?? user ?? (threadId ? 'unknown' : chatId);
  return { conversation: deps.conversation(key, adapter, { chatId, threadId }, chatType), requesterId };
}

/** Messages still queued (when hob stopped, or stored by another process), in order; parts of one paste or album together. */
function requeueRows(deps: RequeueDeps, rows: QueuedInbound[]): void {
  const taken = new Set<number>();
  for (const row of rows) {
    if (taken.has(row.id)) continue;
    // A batch's rows need not be adjacent: another chat's message may have landed between them.
    const parts = row.batch === null ? [row] : rows.filter((other) => other.batch === row.batch && other.sessionKey === row.sessionKey);
    for (const part of parts) taken.add(part.id);
    requeue(deps, row.sessionKey, parts.map((part) => ({ id: part.id, stored: readInbound(part.message) })));
  }
}

/** One queued message (or the parts of one); files come back through their refs. */
function requeue(deps: RequeueDeps, key: string, parts: { id: number; stored: StoredInbound }[]): void {
  const [head] = parts;
  const adapter = head ? deps.adapters.get(head.stored.platform) : undefined;
  if (!head || !adapter) return;
  if (head.stored.command) {
    // Done before it runs, as a command handled where it arrived: once, also if this process stops mid-way.
    deps.inbox.markDone(head.id);
    deps.command?.(key, head.stored, adapter);
    return;
  }
  const { text, attachments, overheard } = restoreParts(parts.map((part) => part.stored), adapter.download?.bind(adapter));
  const { stored } = head;
  const inboxIds = parts.map((part) => part.id);
  const conversation = deps.conversation(key, adapter, stored, stored.chatType);
  const result = conversation.enqueue({ inboxIds, userId: stored.userId, userName: stored.userName, text, attachments, ...(overheard ? { overheard } : {}) });
  if (result === 'full') {
    for (const id of inboxIds) deps.inbox.markDone(id);
    void deps.delivery.send(stored.platform, targetOf(stored), { text: `After a restart I had too many of your messages waiting, so I did not take this one: "${oneLine(stored.text, 60)}". Please send it again.`, plain: true }, key);
  }
}
