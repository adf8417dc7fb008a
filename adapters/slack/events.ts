/**
 * What people write to hob on Slack, into the sink: DMs, mentions in channels, follow-ups in
 * threads hob is part of, edits, and the assistant pane's threads (suggested prompts, a
 * title from the first message). Handlers only enqueue (Bolt has acked the envelope already):
 * each conversation's messages reach the sink in the order they came, whatever one of them
 * waits for (a name look-up, a thread membership question).
 */
import { Assistant, type App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { InboundSink } from '../../src/gateway/channel.js';
import { remember, type BusyIndicator } from './busy-indicator.js';
import type { SlackFiles } from './files.js';
import type { SlackLogger } from './logger.js';
import { chatTypeOf, isAudioClip, isPersonMessage, mentions, normalizeSlackMessage, attachmentOf, type Addressing, type SlackIdentity, type SlackMessageEvent } from './normalize.js';
import { describeError } from './outbound.js';
import type { ThreadMembership } from './thread-membership.js';

const SUGGESTED_PROMPTS = [
  { title: 'What can you do?', message: 'What can you do for me?' },
  { title: 'Summarise a page', message: 'Summarise this page for me: ' },
  { title: 'Run a command', message: 'Show me the disk usage of the workspace' },
];

export type SlackEventDeps = {
  client: WebClient;
  logger: SlackLogger;
  busy: BusyIndicator;
  threads: ThreadMembership;
  files: SlackFiles;
  /** Who hob is on Slack, known once the adapter started; no event is handled before. */
  identity(): SlackIdentity | undefined;
  /** Where messages go while the adapter runs; undefined before and after (a look-up may finish after a stop). */
  sink(): InboundSink | undefined;
};

export class SlackEvents {
  /** Per conversation (`channel:thread_ts`, or the DM): the tail of its inbound queue. */
  private readonly queues = new Map<string, Promise<void>>();
  /** Assistant threads that got their title (from the first message). */
  private readonly titledThreads = new Set<string>();
  private readonly names = new Map<string, Promise<string>>();

  constructor(private readonly deps: SlackEventDeps) {}

  install(app: App): void {
    const { busy, client, logger } = this.deps;
    app.assistant(
      new Assistant({
        // Thread context lives in Slack's events; nothing to keep between them.
        threadContextStore: { get: async () => ({}), save: async () => undefined },
        threadStarted: async ({ event, setSuggestedPrompts }) => {
          const thread = event.assistant_thread;
          busy.assistantThread(thread.channel_id, thread.thread_ts);
          await setSuggestedPrompts({ title: 'Ask hob', prompts: SUGGESTED_PROMPTS }).catch((error: unknown) =>
            logger.warn({ method: 'assistant.threads.setSuggestedPrompts', ...describeError(error) }, 'slack suggested prompts failed'),
          );
        },
        userMessage: async ({ message, body }) => {
          const event = message as SlackMessageEvent;
          const key = `${event.channel}:${event.thread_ts ?? event.ts}`;
          const first = !this.titledThreads.has(key);
          busy.assistantThread(event.channel, event.thread_ts ?? event.ts);
          remember(this.titledThreads, key);
          const eventId = eventIdOf(body);
          this.enqueue(conversationOf(event), async () => {
            await this.onMessage(event, eventId, 'dm');
            if (first && event.thread_ts !== undefined && event.text) {
              void client.assistant.threads
                .setTitle({ channel_id: event.channel, thread_ts: event.thread_ts, title: event.text.slice(0, 60) })
                .catch((error: unknown) => logger.warn({ method: 'assistant.threads.setTitle', ...describeError(error) }, 'slack title failed'));
            }
          });
        },
      }),
    );
    app.event('app_mention', async ({ event, body }) => {
      const mention = event as SlackMessageEvent;
      const eventId = eventIdOf(body);
      this.enqueue(conversationOf(mention), () => this.onMessage(mention, eventId, 'mention'));
    });
    app.message(async ({ message, body }) => {
      const event = message as ChangeableEvent;
      const eventId = eventIdOf(body);
      this.enqueue(conversationOf(editedMessage(event) ?? event), () => this.onChannelOrDm(event, eventId));
    });
  }

  /** Runs `task` after every earlier task of the same conversation. Never rejects: failures are logged. */
  private enqueue(conversation: string, task: () => Promise<void>): void {
    const previous = this.queues.get(conversation) ?? Promise.resolve();
    const next = previous.then(task).catch((error: unknown) => this.deps.logger.error({ session: `slack:${conversation.replace(/:$/, '')}`, ...describeError(error) }, 'slack handler failed'));
    this.queues.set(conversation, next);
    void next.then(() => {
      if (this.queues.get(conversation) === next) this.queues.delete(conversation);
    });
  }

  private async onChannelOrDm(event: ChangeableEvent, eventId: string): Promise<void> {
    const identity = this.deps.identity();
    if (!identity) return;
    if (event.subtype === 'message_changed') {
      const edited = editedMessage(event);
      if (!edited || !isPersonMessage(edited, identity) || edited.text === event.previous_message?.text) return;
      const via = await this.addressing(edited, true);
      if (!via) return;
      const editedAfterSeconds = Math.max(0, Math.round(Number(event.event_ts ?? event.ts) - Number(edited.ts)));
      await this.onMessage(edited, eventId, via, editedAfterSeconds);
      return;
    }
    const via = await this.addressing(event, false);
    if (via) await this.onMessage(event, eventId, via);
  }

  /** How a message event is addressed to hob, or undefined when it is not. */
  private async addressing(event: SlackMessageEvent, isEdit: boolean): Promise<Addressing['via'] | undefined> {
    const identity = this.deps.identity();
    if (!identity) return undefined;
    if (chatTypeOf(event.channel_type, event.channel) === 'dm') return 'dm';
    // A new mention arrives again as app_mention (that one is handled); an edit does not.
    if (mentions(event.text, identity.userId)) return isEdit ? 'mention' : undefined;
    // Only a person's message in a thread can be a follow-up: nothing to ask Slack otherwise.
    const followUp = event.thread_ts !== undefined && isPersonMessage(event, identity) && (await this.deps.threads.isMember(event.channel, event.thread_ts, identity));
    if (followUp) return 'follow_up';
    // An audio clip cannot @mention hob: whether it is for hob is heard in what it says.
    return !isEdit && isPersonMessage(event, identity) && (event.files ?? []).some(isAudioClip) ? 'overheard' : undefined;
  }

  private async onMessage(event: SlackMessageEvent, eventId: string, via: Addressing['via'], editedAfterSeconds?: number): Promise<void> {
    const identity = this.deps.identity();
    if (!identity || !isPersonMessage(event, identity)) return;
    const userName = await this.nameOf(event);
    const inbound = normalizeSlackMessage(event, { eventId, via, userName, ...(editedAfterSeconds !== undefined ? { editedAfterSeconds } : {}) }, identity, (file) =>
      attachmentOf(file, this.deps.files.loaderOf(file)),
    );
    // An overheard clip makes hob part of nothing until it is answered (then the answer joins the thread).
    const addressed = via !== 'overheard';
    if (addressed && inbound.threadId !== undefined && inbound.chatType !== 'dm') this.deps.threads.join(inbound.chatId, inbound.threadId);
    // Nothing reaches the sink once the adapter stopped (a lookup may finish after that).
    const sink = this.deps.sink();
    if (!sink) return;
    if (addressed && editedAfterSeconds === undefined) this.deps.busy.received(inbound, inbound.messageId);
    sink.message(inbound);
  }

  /** The person's name as the thread shows it (profile in the event, else users.info, once per person). */
  private nameOf(event: SlackMessageEvent): Promise<string> {
    const profile = event.user_profile;
    const fromEvent = profile?.display_name || profile?.real_name || profile?.name;
    const userId = event.user ?? 'unknown';
    if (fromEvent) return Promise.resolve(fromEvent);
    let name = this.names.get(userId);
    if (!name) {
      name = this.deps.client.users
        .info({ user: userId })
        .then((info) => info.user?.profile?.display_name || info.user?.real_name || info.user?.name || userId)
        .catch(() => userId);
      this.names.set(userId, name);
    }
    return name;
  }
}

/** A message event, or a message_changed event carrying the edited message. */
type ChangeableEvent = SlackMessageEvent & { message?: SlackMessageEvent; previous_message?: { text?: string }; event_ts?: string };

/** A message_changed event's edited message, with the channel it is in; undefined for any other event. */
function editedMessage(event: ChangeableEvent): SlackMessageEvent | undefined {
  if (event.subtype !== 'message_changed' || !event.message) return undefined;
  return { ...event.message, channel: event.channel, ...(event.channel_type !== undefined ? { channel_type: event.channel_type } : {}) };
}

/** The conversation a message belongs to: its channel thread (a top-level mention opens one), or the DM or DM thread. */
function conversationOf(event: SlackMessageEvent): string {
  const threadTs = event.thread_ts ?? (chatTypeOf(event.channel_type, event.channel) === 'dm' ? '' : event.ts);
  return `${event.channel}:${threadTs}`;
}

/** Events carry a workspace-unique id; a redelivery carries the same one. */
function eventIdOf(body: unknown): string {
  const id = (body as { event_id?: unknown }).event_id;
  return typeof id === 'string' ? id : `event:${Date.now()}:${Math.random()}`;
}
