import { z } from 'zod';
import { stopReason } from '../core/shutdown.js';
import { defineTool } from './tool.js';

/** Asks the person a question, with up to 8 options shown as buttons; they tap one or type. */
export const askUserTool = defineTool({
  name: 'ask_user',
  description:
    'Ask the person a question and wait for the answer. Give up to 8 short options when the answer is a choice; they can also type a free answer.',
  input: z.object({
    question: z.string().min(1).max(1000),
    options: z.array(z.string().min(1).max(60)).max(8).default([]),
  }),
  readOnly: true,
  run: async ({ question, options }, ctx) => {
    const answer = await ctx.interaction.choose(question, options, ctx.signal);
    if (ctx.signal.aborted) {
      const why = stopReason(ctx.signal, 'the run was stopped');
      return { content: `Not answered: ${why} before the person replied. Ask again if you still need to know.`, isError: true };
    }
    return `The person answered: ${answer}`;
  },
});
