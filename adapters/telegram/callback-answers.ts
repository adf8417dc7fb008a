import type { TelegramLogger } from './logger.js';
import { describeError } from './outbound.js';

type AnswerCall = (queryId: string, text: string | undefined) => Promise<unknown>;

/** Telegram shows at most 200 characters in a callback notice and refuses longer ones. */
const MAX_NOTICE_LENGTH = 200;

/**
 * Answers every callback query exactly once. Telegram shows a spinner on the pressed button
 * until the query is answered, and refuses a second answer; the gateway decides what the
 * notice says, possibly only after some work. So the gateway's `answer(text)` is the answer
 * when it comes within `timeoutMs`; otherwise the query is answered empty at the deadline
 * (the spinner stops) and the gateway's late answer is a no-op. Later calls are no-ops too.
 */
export class CallbackAnswers {
  private readonly pending = new Map<string, { timer: NodeJS.Timeout; answer: (text?: string) => Promise<void> }>();

  constructor(
    private readonly call: AnswerCall,
    private readonly timeoutMs: number,
    private readonly logger: TelegramLogger,
  ) {}

  /** Starts the deadline for one query and returns its answer function (never throws). */
  track(queryId: string): (text?: string) => Promise<void> {
    let answered = false;
    const answer = async (text?: string): Promise<void> => {
      if (answered) return;
      answered = true;
      const entry = this.pending.get(queryId);
      if (entry) clearTimeout(entry.timer);
      this.pending.delete(queryId);
      try {
        await this.call(queryId, text === undefined || text === '' ? undefined : text.slice(0, MAX_NOTICE_LENGTH));
      } catch (error) {
        // The press itself was delivered; a lost notice (query expired) is only cosmetic.
        this.logger.warn({ method: 'answerCallbackQuery', ...describeError(error) }, 'telegram callback answer failed');
      }
    };
    const timer = setTimeout(() => void answer(), this.timeoutMs);
    timer.unref();
    this.pending.set(queryId, { timer, answer });
    return answer;
  }

  /** Answers whatever is still open (empty), so no button keeps spinning after a stop. */
  async flush(): Promise<void> {
    await Promise.all([...this.pending.values()].map((entry) => entry.answer()));
  }
}
