import type { AgentEvent, DoneReason } from '../core/events.js';
import { addUsage, emptyUsage, messageText, type Usage } from '../core/messages.js';

/**
 * What a headless run (a worker, a background task) keeps of its events: what it said last
 * (and what it was writing when cut off), how it ended, and what it spent.
 */
export class RunTally {
  /** The last text it said in a whole message; its final answer once the run ends well. */
  answer: string;
  /** What it was writing since its last whole message. */
  partial = '';
  error: string | undefined;
  reason: DoneReason | undefined;
  toolUses = 0;
  usage: Usage = emptyUsage();

  constructor(answer = '') {
    this.answer = answer;
  }

  /** Its answer, or what it had written when it was cut off. */
  get said(): string {
    return (this.answer || this.partial).trim();
  }

  /** Reads every event, passing each to `also` after it is counted; a throw (a broken contract) becomes the run's error. */
  async consume(events: AsyncIterable<AgentEvent>, also: (event: AgentEvent) => void = () => undefined): Promise<void> {
    try {
      for await (const event of events) {
        this.see(event);
        also(event);
      }
    } catch (error) {
      this.error = error instanceof Error ? error.message : String(error);
    }
  }

  private see(event: AgentEvent): void {
    switch (event.type) {
      case 'text_delta':
        this.partial += event.text;
        break;
      case 'assistant_message': {
        this.partial = '';
        const said = messageText(event.message).trim();
        if (said) this.answer = said;
        break;
      }
      case 'usage':
        this.usage = addUsage(this.usage, event.usage);
        break;
      case 'tool_started':
        this.toolUses += 1;
        break;
      case 'error':
        this.error = event.detail ?? event.message;
        break;
      case 'done':
        this.reason = event.reason;
        break;
      default:
        break;
    }
  }
}
