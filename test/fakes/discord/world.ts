/** What the fake Discord knows: people, channels, messages, interactions, as the wire shows them. */

export type Json = Record<string, unknown>;

export type FakePerson = { id: string; name: string; bot?: boolean };

export type Channel = { id: string; type: number; guildId?: string; parentId?: string; recipient?: FakePerson; name?: string };

/** An interaction hob was sent; `acks` are its callback types in order. */
export type Interaction = { id: string; token: string; user: FakePerson; channelId: string; acks: number[]; ephemeralOriginal: boolean; originalId?: string };

/** A message in a channel, as people would read it now. */
export type StoredMessage = {
  id: string;
  channelId: string;
  author: FakePerson;
  content: string;
  /** Button rows: label and custom_id of each button. */
  buttons: { label: string; customId: string }[][];
  attachments: { name: string; bytes: Buffer }[];
  /** Who the message pinged when it was created (`@everyone`, `user:ID`, `role:ID`). */
  pinged: string[];
  replyTo?: string;
  edits: number;
  deleted: boolean;
  /** The raw create payload as received (bot messages) or sent (people's messages). */
  wire: Json;
};

/** A private answer only one person sees (ephemeral interaction responses and follow-ups). */
export type Notice = { userId: string; content: string; interactionId: string };

/** One REST request as the fake received it. */
export type RestCall = { method: string; path: string; body: Json; files: { name: string; bytes: Buffer }[]; auth: string | undefined; status?: number };

export const APP_ID = '1100000000000000001';
export const BOT_ID = '1100000000000000002';
export const GUILD_ID = '1200000000000000001';
export const GENERAL_ID = '1300000000000000001';
/** The role Discord makes for hob when it joins a server (people can mention it by mistake). */
export const BOT_ROLE_ID = '1400000000000000001';

let counter = 0n;
/** Snowflake-shaped ids (numeric strings, increasing), so discord.js can read timestamps from them. */
export function snowflake(): string {
  counter += 1n;
  return String((BigInt(Date.now() - 1_420_070_400_000) << 22n) + (counter % 4096n));
}

export function userObject(person: FakePerson): Json {
  return { id: person.id, username: person.name.toLowerCase(), discriminator: '0', global_name: person.name, avatar: null, ...(person.bot ? { bot: true } : {}) };
}

export function memberObject(person: FakePerson): Json {
  return { user: userObject(person), roles: [], joined_at: new Date(0).toISOString(), deaf: false, mute: false, flags: 0, permissions: '1071698660929' };
}

/**
 * Who a message pings, by Discord's rules: without `allowed_mentions` every mention in the
 * content pings; with it, only the kinds in `parse`, the ids listed, and (for replies) the
 * replied-to author when `replied_user` is true.
 */
export function pingsOf(content: string, allowed: Json | undefined, repliedAuthor: string | undefined): string[] {
  const parse = Array.isArray(allowed?.parse) ? (allowed.parse as string[]) : ['everyone', 'users', 'roles'];
  const users = Array.isArray(allowed?.users) ? (allowed.users as string[]) : [];
  const roles = Array.isArray(allowed?.roles) ? (allowed.roles as string[]) : [];
  const pinged: string[] = [];
  if (/@(everyone|here)/.test(content) && parse.includes('everyone')) pinged.push('@everyone');
  for (const match of content.matchAll(/<@!?(\d+)>/g)) {
    if (parse.includes('users') || users.includes(match[1] as string)) pinged.push(`user:${match[1]}`);
  }
  for (const match of content.matchAll(/<@&(\d+)>/g)) {
    if (parse.includes('roles') || roles.includes(match[1] as string)) pinged.push(`role:${match[1]}`);
  }
  const repliedUser = allowed === undefined ? true : allowed.replied_user === true;
  if (repliedAuthor !== undefined && repliedUser) pinged.push(`user:${repliedAuthor}`);
  return pinged;
}

/** Discord's message object for a stored message. */
export function messageObject(message: StoredMessage, guildId: string | undefined, referenced?: StoredMessage): Json {
  return {
    id: message.id,
    channel_id: message.channelId,
    ...(guildId ? { guild_id: guildId } : {}),
    author: userObject(message.author),
    content: message.content,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [...message.content.matchAll(/<@!?(\d+)>/g)].map((match) => userObject({ id: match[1] as string, name: match[1] === BOT_ID ? 'hob' : `user${match[1]}`, bot: match[1] === BOT_ID })),
    mention_roles: [],
    attachments: message.attachments.map((file, index) => ({ id: `${message.id}${index}`, filename: file.name, size: file.bytes.length })),
    embeds: [],
    components: message.buttons.map((row) => ({ type: 1, components: row.map((button) => ({ type: 2, style: 2, label: button.label, custom_id: button.customId })) })),
    pinned: false,
    type: message.replyTo ? 19 : 0,
    flags: 0,
    ...(message.replyTo ? { message_reference: { message_id: message.replyTo, channel_id: message.channelId, ...(guildId ? { guild_id: guildId } : {}) } } : {}),
    ...(referenced ? { referenced_message: messageObject(referenced, guildId) } : {}),
  };
}
