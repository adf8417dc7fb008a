import type { Attachment, ButtonPress, ChatType, InboundMessage, Target } from '../../src/gateway/channel.js';

/** A file on a Slack message, as events carry it. */
export type SlackFile = {
  id: string;
  name?: string;
  mimetype?: string;
  size?: number;
  url_private_download?: string;
  url_private?: string;
  /** `slack_audio` for a clip recorded in Slack (a voice note; mobile ones may say video/mp4), `slack_video` for a video clip. */
  subtype?: string;
  /** A clip's length. */
  duration_ms?: number;
};

/** The fields of a message (or app_mention) event hob reads. */
export type SlackMessageEvent = {
  type: string;
  channel: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  app_id?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  subtype?: string;
  files?: SlackFile[];
  user_profile?: { display_name?: string; real_name?: string; name?: string };
};

/** Who hob is in this workspace, from auth.test. */
export type SlackIdentity = { userId: string; botId?: string; teamId?: string; name?: string };

/** Subtypes that are a person writing; every other subtype is a system event (joins, topics, bots). */
const PERSON_SUBTYPES = new Set([undefined, 'file_share', 'thread_broadcast', 'me_message']);

export type Addressing = {
  eventId: string;
  /**
   * How the event reached hob: a mention, a DM (or assistant pane), a follow-up in a thread
   * hob is part of, or `overheard`: an audio clip in a channel, answered only when what it
   * says names hob (the gateway decides once it is transcribed).
   */
  via: 'mention' | 'dm' | 'follow_up' | 'overheard';
  userName: string;
  editedAfterSeconds?: number;
};

/** Whether an event is a person's message hob may answer: not a bot (itself included), not a system event. */
export function isPersonMessage(event: SlackMessageEvent, identity: SlackIdentity): boolean {
  // Slackbot posts as a user without a bot_id.
  if (event.bot_id !== undefined || event.user === undefined || event.user === identity.userId || event.user === 'USLACKBOT') return false;
  return PERSON_SUBTYPES.has(event.subtype);
}

/**
 * A person's Slack message → InboundMessage. A thread is a conversation: the thread id is
 * the thread's ts, and a top-level mention in a channel opens a thread under that message.
 * Top-level DMs have no thread (the DM is the conversation); the assistant pane is threads.
 */
export function normalizeSlackMessage(event: SlackMessageEvent, addressing: Addressing, identity: SlackIdentity, attach: (file: SlackFile) => Attachment): InboundMessage {
  const chatType = chatTypeOf(event.channel_type, event.channel);
  const threadId = event.thread_ts ?? (chatType === 'dm' ? undefined : event.ts);
  return {
    platform: 'slack',
    chatId: event.channel,
    ...(threadId !== undefined ? { threadId } : {}),
    userId: event.user ?? 'unknown',
    userName: addressing.userName,
    chatType,
    text: readableText(event.text ?? '', identity.userId),
    attachments: (event.files ?? []).map(attach),
    mentionsBot: addressing.via === 'mention',
    // A follow-up in a thread hob is part of is addressed to it, as a reply to the bot is.
    replyToBot: addressing.via === 'follow_up',
    messageId: event.ts,
    updateId: addressing.eventId,
    // Several people in one thread share it; each message is framed with who wrote it.
    ...(threadId !== undefined ? { sharedThread: true } : {}),
    ...(addressing.editedAfterSeconds !== undefined ? { editedAfterSeconds: addressing.editedAfterSeconds } : {}),
  };
}

export function chatTypeOf(channelType: string | undefined, channel: string): ChatType {
  if (channelType === 'im' || (channelType === undefined && channel.startsWith('D'))) return 'dm';
  return 'group';
}

/** Whether a message's text mentions hob (`<@UBOT>`). */
export function mentions(text: string | undefined, botUserId: string): boolean {
  return text !== undefined && text.includes(`<@${botUserId}>`);
}

/**
 * Slack's wire text as a person wrote it: hob's own mention removed ("@hob, what time is it"
 * → "what time is it"), other mentions, channels and links spelled out, entities decoded.
 */
function readableText(text: string, botUserId: string): string {
  return text
    .replace(new RegExp(`<@${botUserId}(\\|[^>]*)?>[,:;]?[ \\t]*`, 'g'), '')
    .replace(/<@([A-Z0-9]+)(?:\|([^>]*))?>/g, (_match, id: string, name?: string) => `@${name ?? id}`)
    .replace(/<#([A-Z0-9]+)(?:\|([^>]*))?>/g, (_match, id: string, name?: string) => `#${name ?? id}`)
    .replace(/<!(here|channel|everyone)>/g, '@$1')
    .replace(/<((?:https?|mailto):[^|>]+)\|([^>]+)>/g, '$2 ($1)')
    .replace(/<((?:https?|mailto):[^>]+)>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .trim();
}

/** A Slack file as an attachment whose bytes are fetched (with the bot token) only when kept. */
export function attachmentOf(file: SlackFile, download: (fileId: string) => Promise<Buffer>): Attachment {
  const mime = file.mimetype;
  const kind: Attachment['kind'] = isAudioClip(file)
    ? 'voice'
    : mime?.startsWith('image/') ? 'image' : mime?.startsWith('audio/') ? 'audio' : mime?.startsWith('video/') ? 'video' : 'document';
  return {
    kind,
    ...(file.duration_ms !== undefined ? { durationSeconds: file.duration_ms / 1000 } : {}),
    download: () => download(file.id),
    ref: file.id,
    ...(file.name !== undefined ? { fileName: file.name } : {}),
    ...(mime !== undefined ? { mimeType: mime } : {}),
    ...(file.size !== undefined ? { sizeBytes: file.size } : {}),
  };
}

/** A clip recorded in Slack's composer: the voice note of Slack. */
export function isAudioClip(file: SlackFile): boolean {
  return file.subtype === 'slack_audio';
}

/** The fields of a block_actions payload hob reads. */
type BlockActions = {
  user?: { id?: string; name?: string; username?: string };
  channel?: { id?: string };
  container?: { channel_id?: string; message_ts?: string; thread_ts?: string };
  message?: { ts?: string; thread_ts?: string };
  actions?: { value?: string }[];
};

/**
 * A button press (block_actions) → ButtonPress. The button's value is its data (an approval
 * id); `notice` shows the gateway's answer to the presser only. Undefined when the payload
 * lacks what a press needs.
 */
export function normalizeButtonPress(body: unknown, notice: (where: Target, userId: string, text: string) => Promise<void>): ButtonPress | undefined {
  const action = body as BlockActions;
  const data = action.actions?.[0]?.value;
  const userId = action.user?.id;
  const chatId = action.channel?.id ?? action.container?.channel_id;
  const messageId = action.message?.ts ?? action.container?.message_ts;
  if (data === undefined || userId === undefined || chatId === undefined || messageId === undefined) return undefined;
  const threadTs = action.message?.thread_ts ?? action.container?.thread_ts;
  const threadId = threadTs !== undefined && threadTs !== messageId ? threadTs : undefined;
  const where = { chatId, ...(threadId !== undefined ? { threadId } : {}) };
  return {
    platform: 'slack',
    ...where,
    userId,
    userName: action.user?.name ?? action.user?.username ?? userId,
    data,
    messageRef: { ...where, messageId },
    answer: async (text) => {
      if (text !== undefined && text !== '') await notice(where, userId, text);
    },
  };
}
