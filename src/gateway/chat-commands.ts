/**
 * A chat command as the gateway runs it: the services `runCommand` gets, bound to the
 * message's chat and conversation. Commands run once per update (the router sees to that)
 * and never throw: a failure is logged with the session key and told in words.
 */
import { errorMessage } from '../core/errors.js';
import { unlinkedPeople, type PersonResolver } from '../core/person.js';
import type { Logger } from '../logger.js';
import type { Memory } from '../memory/memory.js';
import type { PermissionAdmin } from '../policy/permission-admin.js';
import type { JobAccess } from '../scheduler/tools.js';
import type { Db } from '../store/db.js';
import { SessionArchive } from '../store/session-archive.js';
import type { AccessControl } from './access.js';
import type { ApprovalBroker } from './approvals.js';
import type { ChannelAdapter, InboundMessage } from './channel.js';
import { COMMAND_NAMES, runCommand, type ChannelChatCommand } from './commands.js';
import { jobsMessage } from './commands/jobs.js';
import type { ExtensionCommands } from './commands/skills.js';
import type { Delivery } from './delivery.js';
import { replyTo, targetOf } from './inbound-reply.js';
import type { PairingService } from './pairing.js';
import type { OpenConversation } from './pool.js';

export type ChatCommandDeps = {
  db: Db;
  logger: Logger;
  access: AccessControl;
  broker: ApprovalBroker;
  pairing: PairingService;
  delivery: Delivery;
  conversation: OpenConversation;
  model: { current(): string; switch(name: string): Promise<string> };
  permissions: PermissionAdmin;
  memory?: Memory;
  jobs?: JobAccess;
  extensions?: ExtensionCommands;
  people?: PersonResolver;
  /** Commands the configured channels add (names apart from hob's own). */
  channelCommands?: readonly ChannelChatCommand[];
};

export class ChatCommands {
  /** Past sessions, for /sessions and /resume (its statements prepared once). */
  private readonly archive: SessionArchive;

  /** The channels' commands by name. */
  private readonly channelCommands: ReadonlyMap<string, ChannelChatCommand>;

  constructor(private readonly deps: ChatCommandDeps) {
    this.archive = new SessionArchive(deps.db);
    this.channelCommands = new Map((deps.channelCommands ?? []).filter((entry) => !COMMAND_NAMES.has(entry.command)).map((entry) => [entry.command, entry]));
  }

  /** Whether `/name` is a command the gateway answers (hob's own, or a channel's). */
  has(name: string): boolean {
    return COMMAND_NAMES.has(name) || this.channelCommands.has(name);
  }

  /** Runs one of hob's commands for the message's sender, in the message's conversation. */
  async run(name: string, args: string, message: InboundMessage, key: string, adapter: ChannelAdapter): Promise<void> {
    const { deps } = this;
    const reply = (text: string) => replyTo(deps.delivery, message, text);
    const channelCommand = this.channelCommands.get(name);
    if (channelCommand) return this.runChannelCommand(channelCommand, args, message, key, reply);
    try {
      await runCommand(name, args, message, {
        adapter,
        access: deps.access,
        broker: deps.broker,
        pairing: deps.pairing,
        conversation: () => deps.conversation(key, adapter, message, message.chatType),
        reply,
        currentModel: () => deps.model.current(),
        switchModel: (model) => deps.model.switch(model),
        permissions: (args, userId) => deps.permissions.command(args, userId),
        memory: deps.memory,
        send: async (outbound) => void (await deps.delivery.send(message.platform, targetOf(message), outbound)),
        jobs: deps.jobs ? () => this.jobs(deps.jobs as JobAccess, message, key) : undefined,
        extensions: deps.extensions,
        sessions: { archive: this.archive, people: deps.people ?? unlinkedPeople },
      });
    } catch (error) {
      deps.logger.error({ session: key, command: name, err: errorMessage(error) }, 'command failed');
      await reply(`/${name} failed: ${errorMessage(error)}`);
    }
  }

  /** A channel's command: its reply, or the gateway's refusal for a non-owner or outside a direct chat. */
  private async runChannelCommand(command: ChannelChatCommand, args: string, message: InboundMessage, key: string, reply: (text: string) => Promise<void>): Promise<void> {
    const name = command.command;
    try {
      if (command.ownerOnly && !this.deps.access.isOwner(message.platform, message.userId)) return await reply(`/${name} is only for the owner of this hob.`);
      if (command.directOnly && message.chatType !== 'dm') return await reply(`/${name} answers with something private, so it works only in a direct chat with me.`);
      await reply(await command.run(args, { platform: message.platform, userId: message.userId, chatType: message.chatType }));
    } catch (error) {
      this.deps.logger.error({ session: key, command: name, err: errorMessage(error) }, 'command failed');
      await reply(`/${name} failed: ${errorMessage(error)}`).catch(() => undefined);
    }
  }

  /** `/jobs`: the list with its buttons, in the chat the command came from. */
  private async jobs(jobs: JobAccess, message: InboundMessage, key: string): Promise<void> {
    const list = jobsMessage(jobs, message.platform, message.userId, undefined, message.chatType !== 'dm');
    // A private answer (an ephemeral reply to a slash command) in a group keeps the list private; its buttons need a DM.
    if (message.respond && message.chatType !== 'dm') return message.respond(list.buttons?.length ? `${list.text}\n\nTo pause or delete one, send /jobs to me in a private chat.` : list.text);
    await this.deps.delivery.send(message.platform, targetOf(message), list, key);
  }
}
