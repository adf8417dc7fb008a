/**
 * What people press and type at hob besides messages: the buttons on hob's messages (an
 * approval, a choice) and the `/hob` slash command, whose subcommands are the gateway's
 * commands. Both answer the person privately when they must (an ephemeral notice or reply).
 */
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { BotCommand, InboundMessage, InboundSink, Target } from '../../src/gateway/channel.js';
import type { SlackLogger } from './logger.js';
import { chatTypeOf, normalizeButtonPress } from './normalize.js';
import { describeError } from './outbound.js';
import { ACTION_PREFIX, escapeText } from './render.js';
import { channelCommandPointer, slashCommandText, type SlashCommand } from './slash-command.js';

export type SlackInteractionDeps = {
  client: WebClient;
  logger: SlackLogger;
  /** The gateway's sink, once the adapter started. */
  sink(): InboundSink | undefined;
  /** The bot's name in the workspace, once known (a pointer to a thread names it). */
  botName(): string | undefined;
};

export class SlackInteractions {
  /** The `/hob` subcommands: the gateway's commands (and later ones it registers). */
  private commandNames = new Set<string>();

  constructor(private readonly deps: SlackInteractionDeps) {}

  /** The slash command's subcommands are the gateway's commands (and later ones it registers). */
  setCommands(everyone: BotCommand[], owners?: { userIds: string[]; commands: BotCommand[] }): void {
    this.commandNames = new Set([...everyone, ...(owners?.commands ?? [])].map((entry) => entry.command.replace(/^\//, '').toLowerCase()));
  }

  install(app: App): void {
    app.action(new RegExp(`^${ACTION_PREFIX}`), async ({ ack, body }) => {
      await ack();
      const press = normalizeButtonPress(body, this.notice);
      if (press) this.deps.sink()?.button(press);
    });
    app.command('/hob', async ({ ack, command, respond }) => {
      await ack();
      const reply = async (text: string) => {
        await respond({ response_type: 'ephemeral', text: escapeText(text) }).catch((error: unknown) =>
          this.deps.logger.warn({ method: 'response_url', ...describeError(error) }, 'slack could not answer /hob'),
        );
      };
      this.onSlashCommand(command, reply);
    });
  }

  private onSlashCommand(command: SlashCommand, reply: (text: string) => Promise<void>): void {
    const parsed = slashCommandText(command.text, this.commandNames);
    if (parsed.kind === 'unknown') {
      void reply(parsed.help);
      return;
    }
    const chatType = chatTypeOf(undefined, command.channel_id);
    const elsewhere = chatType === 'dm' ? undefined : channelCommandPointer(parsed.text, this.deps.botName() ?? 'hob');
    if (elsewhere !== undefined) {
      void reply(elsewhere);
      return;
    }
    const inbound: InboundMessage = {
      platform: 'slack',
      chatId: command.channel_id,
      userId: command.user_id,
      userName: command.user_name,
      chatType,
      text: parsed.text,
      attachments: [],
      mentionsBot: true,
      replyToBot: false,
      messageId: command.trigger_id,
      updateId: `command:${command.trigger_id}`,
      respond: reply,
    };
    this.deps.sink()?.message(inbound);
  }

  /** Shows a short notice to the presser only (an ephemeral message where the button is). Never throws. */
  private readonly notice = async (where: Target, userId: string, text: string): Promise<void> => {
    await this.deps.client.chat
      .postEphemeral({ channel: where.chatId, user: userId, text: escapeText(text), ...(where.threadId !== undefined ? { thread_ts: where.threadId } : {}) })
      .then(() => undefined)
      .catch((error: unknown) => this.deps.logger.warn({ method: 'chat.postEphemeral', ...describeError(error) }, 'slack notice failed'));
  };
}
