/**
 * The questions a run asks its person (the model's `ask_user`): one at a time, with the
 * options as buttons (`q:<id>:<index>`) where the channel has them, answered by a press or by
 * the next text message of the person asked. A question ends with an answer, a timeout or
 * the run's stop; its message then shows what was answered, without buttons.
 *
 * With several processes on one database (`shared`), the question is also a row there, so a
 * press that reaches another process can answer it (presses.ts); this desk is then woken by
 * the database's notice, and the first answer recorded holds wherever it was given.
 */
import { randomBytes } from 'node:crypto';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { SharedDecisions } from '../store/shared-decisions.js';
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
  /** Several processes on one database: questions any of them can take the answer of (absent with SQLite). */
  shared?: SharedDecisions;
  now(): number;
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

  /** A text from the person asked answers the open question; false when there is none for them (or it just closed). */
  answerWithText(userId: string, text: string): boolean {
    if (!this.open || userId !== this.open.askerId) return false;
    return this.settle(this.open, text, userId) !== undefined;
  }

  /** The question with this id was answered in some process: the run waiting here goes on with that answer. */
  woken(id: string): void {
    const question = this.open;
    const answer = question?.id === id ? this.options.shared?.question(id)?.answer : undefined;
    if (question && answer !== undefined && answer !== null) question.resolve(answer);
  }

  /** After the notices' connection came back: the open question is read again (its notice may be lost). */
  recheck(): void {
    if (this.open) this.woken(this.open.id);
  }

  /** A button press on a question (`q:<id>:<index>`). */
  async handlePress(press: ButtonPress, id: string, index: number): Promise<void> {
    const question = this.open;
    if (!question || question.id !== id) return press.answer('This question is no longer open.');
    if (press.userId !== question.askerId) return press.answer('This question is for someone else.');
    const answer = question.options[index];
    if (answer === undefined) return press.answer('Unknown option.');
    const taken = this.settle(question, answer, press.userId);
    await press.answer(taken === answer ? `You chose: ${answer}` : 'This question is no longer open.');
  }

  /** Resolves the question with its answer: with `shared`, the one the database recorded first. */
  private settle(question: PendingQuestion, answer: string, by: string): string | undefined {
    const { shared } = this.options;
    const taken = !shared || shared.answerQuestion(question.id, answer, by, this.options.now()) ? answer : shared.question(question.id)?.answer;
    if (taken !== undefined && taken !== null) question.resolve(taken);
    return taken ?? undefined;
  }

  private async askNow(askerId: string, question: string, options: string[], signal: AbortSignal): Promise<string> {
    if (signal.aborted) return '(cancelled)';
    const { adapter } = this.options;
    const id = randomBytes(4).toString('hex');
    const answer = new Promise<string>((resolve) => {
      this.open = { id, askerId, options, resolve };
    });
    this.options.shared?.openQuestion({ id, sessionKey: this.options.sessionKey, askerId, platform: adapter.platform, options, createdAt: this.options.now() });
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
    // Answered, timed out or stopped: a later press, in any process, is told it is no longer open.
    try {
      this.options.shared?.closeQuestion(id, this.options.now());
    } catch (error) {
      this.options.logger.warn({ session: this.options.sessionKey, err: errorMessage(error) }, 'could not mark the question closed in the database');
    }
    // The buttons go; the question shows what was answered.
    if (sent && options.length && !this.options.closing()) {
      await adapter.edit(sent, { text: `❓ ${question}\n→ ${result}` }).catch((error: unknown) =>
        this.options.logger.warn({ session: this.options.sessionKey, err: errorMessage(error) }, 'could not close the question'),
      );
    }
    return result;
  }
}
