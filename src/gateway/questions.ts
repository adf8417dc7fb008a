/**
 * The questions a run asks its person (the model's `ask_user`): one at a time, with the
 * options as buttons (`q:<id>:<index>`) where the channel has them, answered by a press or by
 * the next text message of the person asked. A question ends with an answer, a timeout or
 * the run's stop; its message then shows what was answered, without buttons.
 */
import { randomBytes } from 'node:crypto';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { ButtonPress, ChannelAdapter, OutboundMessage, SentRef } from './channel.js';

type PendingQuestion = { id: string; askerId: string; options: string[]; resolve(answer: string): void };

export type QuestionDeskOptions = {
  adapter: ChannelAdapter;
  sessionKey: string;
  logger: Logger;
  timeoutSeconds: number;
  /** Sends the question to the chat (the conversation's delivery). */
  send(message: OutboundMessage): Promise<SentRef | undefined>;
  /** hob is closing: the question's message is left as it is. */
  closing(): boolean;
};

/** One conversation's open question, if any. */
export class QuestionDesk {
  private open: PendingQuestion | undefined;
  private asking: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: QuestionDeskOptions) {}

  /** Whether this conversation waits on the question with this id. */
  asks(id: string): boolean {
    return this.open?.id === id;
  }

  /** Asks and waits. Questions are asked one at a time, even when the model asks several at once. */
  ask(askerId: string, question: string, options: string[], signal: AbortSignal): Promise<string> {
    const asked = this.asking.then(() => this.askNow(askerId, question, options, signal));
    this.asking = asked.catch(() => undefined);
    return asked;
  }

  /** A text from the person asked answers the open question; false when there is none for them. */
  answerWithText(userId: string, text: string): boolean {
    if (!this.open || userId !== this.open.askerId) return false;
    this.open.resolve(text);
    return true;
  }

  /** A button press on a question (`q:<id>:<index>`). */
  async handlePress(press: ButtonPress, id: string, index: number): Promise<void> {
    const question = this.open;
    if (!question || question.id !== id) return press.answer('This question is no longer open.');
    if (press.userId !== question.askerId) return press.answer('This question is for someone else.');
    const answer = question.options[index];
    if (answer === undefined) return press.answer('Unknown option.');
    question.resolve(answer);
    await press.answer(`You chose: ${answer}`);
  }

  private async askNow(askerId: string, question: string, options: string[], signal: AbortSignal): Promise<string> {
    if (signal.aborted) return '(cancelled)';
    const { adapter } = this.options;
    const id = randomBytes(4).toString('hex');
    const answer = new Promise<string>((resolve) => {
      this.open = { id, askerId, options, resolve };
    });
    const sent = await this.options.send({
      text: `❓ ${question}${options.length ? '\n(Tap an option or type your answer.)' : ''}`,
      buttons: options.length && adapter.capabilities.buttons ? options.map((option, index) => [{ label: option, data: `q:${id}:${index}` }]) : undefined,
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve('(no answer: the person did not reply in time)'), this.options.timeoutSeconds * 1000);
    });
    const aborted = new Promise<string>((resolve) => {
      if (signal.aborted) resolve('(cancelled)'); // stopped while the question was being sent
      signal.addEventListener('abort', () => resolve('(cancelled)'), { once: true });
    });
    const result = await Promise.race([answer, timeout, aborted]);
    clearTimeout(timer);
    this.open = undefined;
    // The buttons go; the question shows what was answered.
    if (sent && options.length && !this.options.closing()) {
      await adapter.edit(sent, { text: `❓ ${question}\n→ ${result}` }).catch((error: unknown) =>
        this.options.logger.warn({ session: this.options.sessionKey, err: errorMessage(error) }, 'could not close the question'),
      );
    }
    return result;
  }
}
