import { createHmac } from 'node:crypto';
import { Waiters } from '../waiters.js';
import { FakeSocketMode } from './socket.js';
import { dmOf, FakeWebApi, fileObject, type PersonFile } from './web-api.js';

export { dmOf, SCOPES, type ApiCall, type Ephemeral, type FakeMessage, type PersonFile } from './web-api.js';

export type FakeSlackOptions = {
  /**
   * How often Slack pings each socket (the client replaces a socket that goes quiet past its
   * server ping timeout, 30 s by default). Five seconds unless a test of a quiet socket asks
   * for quicker pings: each ping costs the fake and the client a little CPU, and at 200 ms
   * the pings of an idle hob process cost about as much as the rest of its idling.
   */
  pingIntervalMs?: number;
};

export type SlackPerson = { id: string; name: string };

type MessageOptions = { threadTs?: string; files?: PersonFile[]; channelType?: string };

export const BOT = { userId: 'UHOB', botId: 'BHOB', teamId: 'T1', name: 'hob' };

/**
 * A loopback Slack for the real Bolt app and web client: the Web API (`apiUrl` for
 * `clientOptions.slackApiUrl`), Socket Mode over a local websocket (apps.connections.open
 * hands it out), and signed HTTP requests for HTTP mode. Tests act as people (dm, mention,
 * press, slash…) and read what people see (`seen`, ephemerals, reactions).
 */
export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const fake = new FakeSlack(options);
  await fake.web.listen();
  await fake.socket.listening();
  fake.web.socketUrl = fake.socket.url;
  return fake;
}

export class FakeSlack {
  readonly botToken = 'xoxb-fake-bot-token';
  readonly appToken = 'xapp-fake-app-token';
  readonly signingSecret = 'fake-signing-secret';
  readonly web: FakeWebApi;
  readonly socket: FakeSocketMode;
  private events = 0;
  private readonly sentEvents = new Map<string, unknown>();
  private readonly waiters = new Waiters();

  constructor(options: FakeSlackOptions) {
    this.web = new FakeWebApi(this.botToken, this.appToken, BOT);
    this.socket = new FakeSocketMode(options.pingIntervalMs ?? 5_000);
  }

  get apiUrl(): string {
    return this.web.apiUrl;
  }

  /**
   * Another app-level token of this app (Slack lets an app have several), whose Socket Mode
   * connections carry `label`: give each hob process its own, and `socket.deliverOn = label`
   * sends the next envelopes to that process, across its reconnects.
   */
  appTokenFor(label: string): string {
    const token = `${this.appToken}-${label}`;
    this.web.labelledAppTokens.set(token, label);
    return token;
  }

  /** Registers a person (users.info knows their name). */
  person(person: SlackPerson): SlackPerson {
    this.web.people.set(person.id, person.name);
    return person;
  }

  /** A DM to the bot (top level, or in a DM / assistant-pane thread). Resolves with the message ts once acked. */
  async dm(from: SlackPerson, text: string, options: MessageOptions = {}): Promise<string> {
    return this.message(from, dmOf(from.id), text, { ...options, channelType: 'im' });
  }

  /** A message in a channel with `@hob` in it: Slack sends app_mention and the message event. */
  async mention(from: SlackPerson, channel: string, text: string, options: MessageOptions = {}): Promise<string> {
    const ts = this.web.nextTs();
    const event = this.messageEvent(from, channel, `<@${BOT.userId}> ${text}`, ts, { ...options, channelType: 'channel' });
    await this.event({ ...event, type: 'app_mention' });
    await this.event(event);
    return ts;
  }

  /**
   * An audio clip recorded in Slack's composer (no text: a clip cannot @mention anyone), as a
   * DM, or in a channel (or thread) with `channel`. Resolves with the message ts once acked.
   */
  async audioClip(from: SlackPerson, bytes: Buffer, durationMs: number, options: { channel?: string; threadTs?: string; mimetype?: string } = {}): Promise<string> {
    const mimetype = options.mimetype ?? 'audio/webm';
    const file: PersonFile = { name: `audio_message.${mimetype.endsWith('mp4') ? 'm4a' : 'webm'}`, mimetype, bytes, subtype: 'slack_audio', durationMs };
    const threadOption = options.threadTs ? { threadTs: options.threadTs } : {};
    if (options.channel === undefined) return this.dm(from, '', { files: [file], ...threadOption });
    return this.channelMessage(from, options.channel, '', { files: [file], ...threadOption });
  }

  /** A message in a channel without a mention. */
  async channelMessage(from: SlackPerson, channel: string, text: string, options: MessageOptions = {}): Promise<string> {
    return this.message(from, channel, text, { channelType: 'channel', ...options });
  }

  /** Any event (a bot's message, a system subtype…), as Slack would send it. Resolves with its event id. */
  async event(event: Record<string, unknown>, eventId?: string): Promise<string> {
    const id = eventId ?? this.nextEventId();
    const body = this.envelopeBody(event, id);
    this.sentEvents.set(id, body);
    this.web.recordEvent(event);
    await this.socket.send('events_api', body);
    return id;
  }

  /** The same event again, as Slack redelivers one it thinks was not acked in time. */
  async redeliver(eventId: string): Promise<void> {
    const body = this.sentEvents.get(eventId);
    if (!body) throw new Error(`no event ${eventId} to redeliver`);
    await this.socket.send('events_api', body, 1);
  }

  /** The person edits an earlier message. */
  async edit(from: SlackPerson, channel: string, ts: string, text: string, options: { threadTs?: string; channelType?: string; previous?: string } = {}): Promise<string> {
    return this.event({
      type: 'message',
      subtype: 'message_changed',
      channel,
      channel_type: options.channelType ?? (channel.startsWith('D') ? 'im' : 'channel'),
      ts: this.web.nextTs(),
      event_ts: String(Number(ts) + 30),
      message: { type: 'message', user: from.id, text, ts, ...(options.threadTs ? { thread_ts: options.threadTs } : {}), edited: { user: from.id, ts: this.web.nextTs() } },
      previous_message: { type: 'message', user: from.id, text: options.previous ?? 'before', ts },
    });
  }

  /** The person presses a button on a bot message. Resolves once acked. */
  async press(from: SlackPerson, channel: string, ts: string, label: string): Promise<void> {
    const message = this.web.messages.find((entry) => entry.channel === channel && entry.ts === ts && !entry.deleted);
    const button = message?.buttons.find((entry) => entry.label === label);
    if (!message || !button) throw new Error(`no button "${label}" on message ${ts} in ${channel}`);
    await this.pressData(from, channel, ts, { label, value: button.value, actionId: button.actionId, ...(message.threadTs ? { threadTs: message.threadTs } : {}) });
  }

  /** A press with the given button data, as Slack sends it (also for a button no longer shown: a replay). */
  async pressData(from: SlackPerson, channel: string, ts: string, button: { label: string; value: string; actionId: string; threadTs?: string }): Promise<void> {
    const message = { text: '', threadTs: button.threadTs };
    const label = button.label;
    await this.socket.send('interactive', {
      type: 'block_actions',
      team: { id: BOT.teamId },
      user: { id: from.id, username: from.name.toLowerCase(), name: from.name, team_id: BOT.teamId },
      api_app_id: 'A1',
      token: 'verification',
      trigger_id: `trigger-${this.nextEventId()}`,
      container: { type: 'message', message_ts: ts, channel_id: channel, is_ephemeral: false, ...(message.threadTs ? { thread_ts: message.threadTs } : {}) },
      channel: { id: channel, name: channel },
      message: { type: 'message', ts, text: message.text, user: BOT.userId, ...(message.threadTs ? { thread_ts: message.threadTs } : {}) },
      response_url: `${this.web.origin}/response/${channel}/${from.id}`,
      actions: [{ type: 'button', action_id: button.actionId, block_id: 'hob_row_0', value: button.value, text: { type: 'plain_text', text: label }, action_ts: this.web.nextTs() }],
    });
  }

  /** `/hob <text>` typed in a channel or DM. Resolves with the ack's payload. */
  slash(from: SlackPerson, channel: string, text: string): Promise<unknown> {
    return this.socket.send('slash_commands', this.slashBody(from, channel, text));
  }

  slashBody(from: SlackPerson, channel: string, text: string): Record<string, string> {
    return {
      token: 'verification',
      team_id: BOT.teamId,
      channel_id: channel,
      channel_name: channel.startsWith('D') ? 'directmessage' : channel,
      user_id: from.id,
      user_name: from.name,
      command: '/hob',
      text,
      api_app_id: 'A1',
      response_url: `${this.web.origin}/response/${channel}/${from.id}`,
      trigger_id: `trigger-${this.nextEventId()}`,
    };
  }

  /** An assistant-pane thread opens for the person. */
  assistantThreadStarted(from: SlackPerson, threadTs: string): Promise<string> {
    return this.event({
      type: 'assistant_thread_started',
      assistant_thread: { user_id: from.id, context: {}, channel_id: dmOf(from.id), thread_ts: threadTs },
      event_ts: this.web.nextTs(),
    });
  }

  /** Bot messages in a channel (threads included), as people read them now. */
  seen(channel: string): { id: string; text: string; threadTs?: string; buttons: { label: string }[]; files?: { name: string; bytes: Buffer }[] }[] {
    return this.web.messages
      .filter((message) => message.channel === channel && !message.deleted)
      .map((message) => ({
        id: message.ts,
        text: message.text,
        ...(message.threadTs ? { threadTs: message.threadTs } : {}),
        buttons: message.buttons,
        ...(message.files?.length ? { files: message.files.map(({ name, bytes }) => ({ name, bytes })) } : {}),
      }));
  }

  ephemeralsFor(person: SlackPerson): string[] {
    return this.web.ephemerals.filter((entry) => entry.user === person.id).map((entry) => entry.text);
  }

  /** An Events API request body signed as Slack signs it (HTTP mode). */
  signedRequest(body: string, options: { secret?: string; timestamp?: number; retryNum?: number } = {}): Record<string, string> {
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
    const signature = `v0=${createHmac('sha256', options.secret ?? this.signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    return {
      'content-type': 'application/json',
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': signature,
      ...(options.retryNum !== undefined ? { 'x-slack-retry-num': String(options.retryNum), 'x-slack-retry-reason': 'http_timeout' } : {}),
    };
  }

  /** The event_callback body for an event (HTTP mode posts it; Socket Mode wraps it). */
  envelopeBody(event: Record<string, unknown>, eventId: string): Record<string, unknown> {
    return {
      token: 'verification',
      team_id: BOT.teamId,
      api_app_id: 'A1',
      type: 'event_callback',
      event_id: eventId,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{ team_id: BOT.teamId, user_id: BOT.userId, is_bot: true }],
      event,
    };
  }

  messageEvent(from: SlackPerson, channel: string, text: string, ts: string, options: MessageOptions = {}): Record<string, unknown> {
    const files = (options.files ?? []).map((file) => {
      const id = `F${this.web.nextTs().replace('.', '')}`;
      this.web.peopleFiles.set(id, file);
      return { ...fileObject(id, file), url_private_download: `${this.web.origin}/files/${id}` };
    });
    return {
      type: 'message',
      channel,
      channel_type: options.channelType ?? 'channel',
      user: from.id,
      text,
      ts,
      event_ts: ts,
      ...(options.threadTs ? { thread_ts: options.threadTs } : {}),
      ...(files.length ? { subtype: 'file_share', files } : {}),
    };
  }

  nextEventId(): string {
    this.events += 1;
    return `Ev${String(this.events).padStart(6, '0')}`;
  }

  /** Resolves with the first truthy value of `probe`, re-checked every 10 ms. */
  waitFor<T>(probe: () => T | undefined | null | false, timeoutMs = 5000, what = 'condition'): Promise<T> {
    return this.waiters.waitFor(probe, timeoutMs, () => `fake Slack: timed out waiting for ${what}`);
  }

  /** Closes both ends; fails when an envelope was never acked (Slack would redeliver it). */
  async close(): Promise<void> {
    const unacked = this.socket.unacked();
    await this.socket.close();
    await this.web.close();
    if (unacked.length) throw new Error(`fake Slack: envelopes never acked: ${unacked.map((entry) => `${entry.id} (${entry.type})`).join(', ')}`);
  }

  private async message(from: SlackPerson, channel: string, text: string, options: MessageOptions): Promise<string> {
    const ts = this.web.nextTs();
    await this.event(this.messageEvent(from, channel, text, ts, options));
    return ts;
  }
}
