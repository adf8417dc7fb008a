/**
 * The answer when a request cannot be sent even after compacting as far as it goes: the
 * person's message alone (with hob's instructions and room for an answer) is larger than the
 * model's window. One clear sentence, the message kept in the workspace, and the conversation
 * goes on with the next message.
 */
const tokens = (value: number): string => `${Math.max(0, Math.round(value)).toLocaleString('en-US')} tokens`;

export function tooBigSentence(figures: { messageTokens: number; contextWindow: number; room: number; savedAs?: string }): string {
  const kept = figures.savedAs
    ? `I saved it in the workspace as ${figures.savedAs}: ask me to read it in parts, or send a shorter message.`
    : 'Send it in parts, or as a file, and I will read it piece by piece.';
  return `Your message is about ${tokens(figures.messageTokens)}, more than this model can read at once: its window is ${tokens(figures.contextWindow)}, and with my instructions and room for an answer a message can take about ${tokens(figures.room)}. ${kept}`;
}

/** When even the newest message with a one-line summary does not fit, but the message alone would: a tool loop grew too big. */
export function noRoomSentence(contextWindow: number): string {
  return `This step no longer fits the model's window of ${tokens(contextWindow)}, even after compacting the conversation. Send your next message and I will carry on from a summary, or /new to start over.`;
}
