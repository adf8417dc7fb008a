/**
 * Button presses, routed by their data to whoever made the button: approvals (`ap:`),
 * pairing (`pair:`), memory (`mem:`), jobs (`job:`), a run's questions (`q:`). Each handler
 * says whether the press was its own; a press nobody claims is told its button is no longer
 * active. A new kind of button is one more handler in the list the gateway builds.
 */
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../logger.js';
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
 * asker's, so someone else is told it is not theirs).
 */
export function questionPresses(conversations: () => Conversation[]): PressHandler {
  return async (press) => {
    const question = /^q:([0-9a-f]+):(\d+)$/.exec(press.data);
    if (!question) return false;
    const id = question[1] as string;
    const conversation = conversations().find((candidate) => candidate.questions.asks(id));
    if (conversation) await conversation.questions.handlePress(press, id, Number(question[2]));
    else await press.answer('This question is no longer open.');
    return true;
  };
}
