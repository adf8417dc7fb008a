/**
 * Button presses, routed by their data to whoever made the button: approvals (`ap:`),
 * pairing (`pair:`), memory (`mem:`), jobs (`job:`), a run's questions (`q:`). Each handler
 * says whether the press was its own; a press nobody claims is told its button is no longer
 * active. A new kind of button is one more handler in the list the gateway builds.
 */
import { errorMessage } from '../core/errors.js';
import type { TaskManager } from '../engine/tasks/task-manager.js';
import type { Logger } from '../logger.js';
import type { PermissionAdmin } from '../policy/permission-admin.js';
import type { ConversationRepository } from '../store/conversations.js';
import type { SharedDecisions } from '../store/shared-decisions.js';
import type { ApprovalBroker } from './approvals.js';
import type { ButtonPress, ChannelAdapter } from './channel.js';
import type { Conversation } from './conversation.js';

/** Handles a press if it is its own (true), else leaves it to the next handler (false). */
export type PressHandler = (press: ButtonPress, adapter: ChannelAdapter) => Promise<boolean>;

export class PressRouter {
  constructor(
    private readonly adapter: (platform: string) => ChannelAdapter | undefined,
    private readonly handlers: PressHandler[],
    private readonly logger: Logger,
  ) {}

  /** Must not throw: a failed press is logged and the person is asked to try again. */
  press(press: ButtonPress): void {
    void this.route(press).catch((error: unknown) => {
      this.logger.error({ platform: press.platform, chat: press.chatId, err: errorMessage(error) }, 'button press failed');
      void press.answer('Something went wrong; please try again.');
    });
  }

  private async route(press: ButtonPress): Promise<void> {
    const adapter = this.adapter(press.platform);
    if (!adapter) return;
    for (const handler of this.handlers) if (await handler(press, adapter)) return;
    await press.answer('This button is no longer active.');
  }
}

/**
 * `q:<id>:<index>`: an option of a question a run asked. Question ids are random: the
 * conversation asking it is found whoever presses (in a per-person group that is the
 * asker's, so someone else is told it is not theirs). With several processes (`shared`), a
 * question no conversation here asks may be waiting in another process: it is answered in
 * the database, by the same rules, and that process is woken.
 */
export function questionPresses(conversations: () => Conversation[], shared?: { decisions: SharedDecisions; now(): number }): PressHandler {
  return async (press) => {
    const question = /^q:([0-9a-f]+):(\d+)$/.exec(press.data);
    if (!question) return false;
    const id = question[1] as string;
    const index = Number(question[2]);
    const conversation = conversations().find((candidate) => candidate.questions.asks(id));
    if (conversation) await conversation.questions.handlePress(press, id, index);
    else await press.answer(shared ? answerElsewhere(shared.decisions, press, id, index, shared.now()) : 'This question is no longer open.');
    return true;
  };
}

/** A question asked by a run in another process: answered in the database; the words are those the asking process would use. */
function answerElsewhere(shared: SharedDecisions, press: ButtonPress, id: string, index: number, now: number): string {
  const row = shared.question(id);
  if (!row || row.closedAt !== null || row.platform !== press.platform) return 'This question is no longer open.';
  if (press.userId !== row.askerId) return 'This question is for someone else.';
  const answer = row.options[index];
  if (answer === undefined) return 'Unknown option.';
  return shared.answerQuestion(id, answer, press.userId, now) ? `You chose: ${answer}` : 'This question is no longer open.';
}

/** What else follows the other processes: permission rules and mode, background task stops. */
export type SharedFollowers = { permissions: PermissionAdmin; tasks?: TaskManager };

/**
 * Several processes on one database: a decision taken in any process wakes the run waiting
 * for it here, a `/stop` given in any process stops the run here, a task stopped elsewhere
 * stops here, and "always allow" rules or the mode changed elsewhere apply here. Once
 * listening starts, and after a lost connection, every waiting approval and question and the
 * rules are read again (a mode switch whose notice was lost is not: it lives in no table).
 * Never throws from a notice: a failed read is logged (the run then waits for its timeout).
 */
export async function listenForDecisions(shared: SharedDecisions | undefined, broker: ApprovalBroker, conversations: () => Conversation[], logger: Logger, followers: SharedFollowers): Promise<void> {
  if (!shared) return;
  const { permissions, tasks } = followers;
  permissions.announceTo({ rulesChanged: () => shared.rulesChanged(), modeSwitched: (mode) => shared.modeSwitched(mode) });
  tasks?.announceTo({ taskStopped: (id) => shared.taskStopped(id) });
  const guarded = (what: string, fn: () => void) => () => {
    try {
      fn();
    } catch (error) {
      logger.warn({ notice: what, err: errorMessage(error) }, 'could not act on a decision from another process');
    }
  };
  const recheck = guarded('recheck', () => {
    permissions.reload();
    broker.recheck();
    for (const conversation of conversations()) conversation.questions.recheck();
  });
  await shared.listen(({ kind, id }) => guarded(`${kind}:${id}`, () => {
    if (kind === 'approval') broker.woken(id);
    else if (kind === 'question') conversations().find((conversation) => conversation.questions.asks(id))?.questions.woken(id);
    else if (kind === 'rules' || kind === 'mode') {
      if (kind === 'rules') permissions.reload();
      else permissions.applyMode(id);
      logger.info({ notice: kind, ...(kind === 'mode' ? { mode: id } : {}) }, 'permissions changed in some process: applied here');
    }
    else if (kind === 'task') tasks?.stoppedElsewhere(id);
    // `/stop` given in another process: the run here stops (and says so in the chat, as after a local /stop).
    else conversations().find((conversation) => conversation.key === id)?.stop();
  })(), recheck);
  recheck();
}

/**
 * `/stop` in a process that is not running the conversation: when its session is marked as
 * running (by whichever process runs it), that process is asked to stop it. False when no run is marked.
 */
export function stopElsewhere(conversations: Pick<ConversationRepository, 'activeSession' | 'isRunning'>, shared: SharedDecisions, key: string): boolean {
  if (!conversations.isRunning(conversations.activeSession(key).id)) return false;
  shared.requestStop(key);
  return true;
}
