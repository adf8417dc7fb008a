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
import type { SessionArchive } from '../store/session-archive.js';
import type { AccessControl } from './access.js';
import type { ApprovalBroker } from './approvals.js';
import type { ChannelAdapter, InboundMessage, OutboundMessage } from './channel.js';
import type { ChannelChatCommand } from './channel-module.js';
import { COMMAND_NAMES, runCommand, type CommandServices } from './commands.js';
import { jobsMessage } from './commands/jobs.js';
import { runTaskCommand } from './commands/tasks.js';
import type { TaskManager } from '../engine/tasks/task-manager.js';
import type { ExtensionCommands } from './commands/skills.js';
import type { Delivery } from './delivery.js';
import { replyTo, targetOf } from './inbound-reply.js';
import type { PairingService } from './pairing.js';
import type { OpenConversation } from './pool.js';

export type ChatCommandDeps = {
  /** Past sessions, for /sessions and /resume. */
  archive: SessionArchive;
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
  /** Background tasks (issue 21): `/bg`, `/tasks`, and their part of /usage. */
  tasks?: TaskManager;
  now(): number;
  /** Commands the chat channels bring (their modules' `chatCommands`), answered on every platform. */
  channelCommands?: readonly ChannelChatCommand[];
  /** issue 23: `/stop` for a conversation whose run is in another process (absent with one process). */
  stopElsewhere?(key: string): boolean;
};

export class ChatCommands {
  /** Past sessions, for /sessions and /resume (its statements prepared once). */
  private readonly archive: SessionArchive;

  constructor(private readonly deps: ChatCommandDeps) {
    this.archive = deps.archive;
  }

  /** Whether `name` is a command hob answers itself (its own, or a channel's). */
  has(name: string): boolean {
    return COMMAND_NAMES.has(name) || this.channelCommand(name) !== undefined;
  }

  /** Runs one of hob's commands for the message's sender, in the message's conversation. */
  async run(name: string, args: string, message: InboundMessage, key: string, adapter: ChannelAdapter): Promise<void> {
    const { deps } = this;
    const reply = (text: string) => replyTo(deps.delivery, message, text);
    try {
      const channelCommand = this.channelCommand(name);
      if (channelCommand) return await reply(await this.runChannelCommand(channelCommand, args, message));
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
        ...(deps.tasks ? this.taskServices(deps.tasks, message, key, reply) : {}),
        ...(deps.stopElsewhere ? { stopElsewhere: () => deps.stopElsewhere?.(key) === true } : {}),
      });
    } catch (error) {
      deps.logger.error({ session: key, command: name, err: errorMessage(error) }, 'command failed');
      await reply(`/${name} failed: ${errorMessage(error)}`);
    }
  }

  /** `/bg`, `/tasks` and the tasks' line of /usage, for the message's sender. */
  private taskServices(tasks: TaskManager, message: InboundMessage, key: string, reply: (text: string) => Promise<void>): Pick<CommandServices, 'tasks' | 'taskUsage'> {
    const people = this.deps.people ?? unlinkedPeople;
    const send = async (outbound: OutboundMessage) => void (await this.deps.delivery.send(message.platform, targetOf(message), outbound));
    return {
      tasks: (name, args) => runTaskCommand(name, args, message, key, { tasks, people, now: this.deps.now }, { reply, send }),
      taskUsage: () => {
        const spent = tasks.spentBy(people.personId(message.platform, message.userId));
        if (spent.tasks + spent.workers === 0) return undefined;
        return `Background tasks and workers (${spent.tasks} task${spent.tasks === 1 ? '' : 's'}, ${spent.workers} worker${spent.workers === 1 ? '' : 's'}, all time): ${(spent.inputTokens + spent.outputTokens).toLocaleString('en-US')} tokens, $${spent.costUsd.toFixed(4)}`;
      },
    };
  }

  private channelCommand(name: string): ChannelChatCommand | undefined {
    return COMMAND_NAMES.has(name) ? undefined : this.deps.channelCommands?.find((command) => command.command === name);
  }

  /** A channel's command, refused in hob's usual words to whom it is not for. */
  private async runChannelCommand(command: ChannelChatCommand, args: string, message: InboundMessage): Promise<string> {
    if (command.ownerOnly && !this.deps.access.isOwner(message.platform, message.userId)) return `/${command.command} is only for the owner of this hob.`;
    if (command.directOnly && message.chatType !== 'dm') return `/${command.command} answers only in a private chat: send it to me there.`;
    return command.run(args, { platform: message.platform, userId: message.userId, chatType: message.chatType });
  }

  /** `/jobs`: the list with its buttons, in the chat the command came from. */
  private async jobs(jobs: JobAccess, message: InboundMessage, key: string): Promise<void> {
    const list = jobsMessage(jobs, message.platform, message.userId, undefined, message.chatType !== 'dm');
    // A private answer (an ephemeral reply to a slash command) in a group keeps the list private; its buttons need a DM.
    if (message.respond && message.chatType !== 'dm') return message.respond(list.buttons?.length ? `${list.text}\n\nTo pause or delete one, send /jobs to me in a private chat.` : list.text);
    await this.deps.delivery.send(message.platform, targetOf(message), list, key);
  }
}
