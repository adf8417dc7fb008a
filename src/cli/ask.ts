import type { QueryEngine } from '../engine/query-engine.js';
import { denyingInteraction, type Interaction } from '../policy/types.js';
import { EventPrinter } from './render.js';

/** Allows every call it is asked about (`hob ask --yes`); rules that deny still deny. */
const yesInteraction: Interaction = {
  confirm: async () => 'allow_once',
  choose: async (_question, options) => options[0] ?? '',
};

export type AskOptions = {
  engine: QueryEngine;
  prompt: string;
  json: boolean;
  yes: boolean;
  userId: string;
  out?: NodeJS.WritableStream;
};

/**
 * Answers one message and returns the exit code: 0 when the model finished, 1 otherwise.
 * With --json every event is one JSON line; approvals are denied unless --yes.
 */
export async function runAsk(options: AskOptions): Promise<number> {
  const out = options.out ?? process.stdout;
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  const printer = new EventPrinter(out, false);
  let reason: string = 'error';
  try {
    const events = options.engine.submit(options.prompt, {
      userId: options.userId,
      interaction: options.yes ? yesInteraction : denyingInteraction,
      signal: controller.signal,
      interactive: options.yes,
    });
    for await (const event of events) {
      if (options.json) out.write(`${JSON.stringify(event)}\n`);
      else printer.write(event);
      if (event.type === 'done') reason = event.reason;
    }
  } finally {
    process.off('SIGINT', onSigint);
  }
  return reason === 'end_turn' ? 0 : 1;
}
