/**
 * A session's run: the loop over its history, from the message just stored to the answer.
 * The loop (run-query.ts) gets what it needs as data — the run's profile, the system prompt,
 * the history, the tools' context — and a small port: steered text, and the compaction
 * hand-off. Every message it appends comes back as an event and is stored here as it
 * happens, into the session the run started in; a run the person stopped is closed in the
 * history; one cut off by a shutdown stays marked, so the next start resumes it.
 */
import type { AgentEvent } from '../core/events.js';
import { text, toolUses, type Message } from '../core/messages.js';
import { SHUTDOWN_REASON } from '../core/shutdown.js';
import type { ToolContext } from '../tools/tool.js';
import { runCompaction } from './compaction-handoff.js';
import type { ContextKeeper } from './context-keeper.js';
import type { EngineDeps, RunProfile, SubmitOptions } from './engine-deps.js';
import { runQuery, type LoopInput } from './run-query.js';
import type { SessionState } from './session-state.js';
import { cancelledResult } from './tool-execution.js';

/** The closing note of a run the person stopped; the next message starts a new turn. */
export const STOPPED_NOTE = '[The person stopped this run before it finished. Do not resume it unless they ask again.]';

/** Text that arrived while the run was busy, framed so the model knows it came mid-run. */
export const frameSteered = (line: string): string => `[Sent while you were working] ${line}`;

/** Text the person sent while a run was busy, waiting for the loop's next tool boundary. */
export class SteeringInbox {
  private lines: string[] = [];

  push(line: string): void {
    this.lines.push(line);
  }

  /** How many lines the loop has not read yet. */
  get pending(): number {
    return this.lines.length;
  }

  /** Every waiting line, as it was sent (for a caller that turns them into a new message). */
  take(): string[] {
    return this.lines.splice(0);
  }

  /** Every waiting line, framed for the model (the loop's `drainSteering`). */
  drain(): string[] {
    return this.take().map(frameSteered);
  }
}

/** One run of a conversation's session. */
export type SessionRun = {
  sessionKey: string;
  /** The session the run started in: it writes there even if /new makes another current meanwhile. */
  state: SessionState;
  /** Whose message started it: the rows it stores are theirs. */
  personId: string;
  keeper: ContextKeeper;
  steering: SteeringInbox;
  options: SubmitOptions;
};

/** Runs the loop for the session's newest message (already stored), storing what it appends. */
export async function* runSession(deps: EngineDeps, run: SessionRun): AsyncGenerator<AgentEvent> {
  const { state, personId, options } = run;
  const { tokens: contextWindow } = await run.keeper.window();
  const system = deps.systemPrompt({ sessionKey: run.sessionKey, userId: options.userId, interactive: options.interactive ?? true, sessionId: state.id, chatType: options.chatType, contextWindow });
  const compaction = runCompaction(run.keeper, state, system, options.signal);
  let settled = false;
  /** What the model wrote since its last complete message: kept when the person stops the run. */
  let partial = '';
  try {
    const events = runQuery({
      ...loopInput(deps, system, state.history, toolContext(deps, run.sessionKey, options)),
      drainSteering: () => run.steering.drain(),
      beforeRequest: compaction.beforeRequest,
      onPromptTooLong: compaction.onPromptTooLong,
    });
    for await (const event of events) {
      if (event.type === 'text_delta') partial += event.text;
      if (event.type === 'assistant_message') partial = '';
      if (event.type === 'assistant_message' && toolUses(event.message).length === 0) {
        // The answer: the run ends with it, so the running mark clears in the same write.
        const answer = event.message;
        const store = () => state.append(answer, { run: 'ends', personId });
        if (options.storingAnswer) options.storingAnswer(answer, store);
        else store();
        settled = true;
      } else if (event.type === 'assistant_message' || event.type === 'user_message') {
        const remembered = event.type === 'user_message' && state.rememberToolResults(event.message);
        // Working memory is saved in the same write as the tool results that filled it.
        state.append(event.message, { personId, ...(remembered ? { workingMemory: state.workingMemory.toJSON() } : {}) });
      }
      if (event.type === 'usage') {
        compaction.observe(event.usage);
        state.recordUsage(event.model, event.usage, deps.costUsd(event.model, event.usage));
      }
      yield event;
    }
  } finally {
    const shutdown = options.signal.aborted && options.signal.reason === SHUTDOWN_REASON;
    if (!settled && options.signal.aborted && !shutdown) settled = closeStopped(state, partial, personId);
    // Stopped for a shutdown: left marked, so the next start picks it up.
    if (!settled && !shutdown) state.settle();
    writeUsage(state);
  }
}

/** The loop's input: a run of this profile over these messages. */
function loopInput(profile: RunProfile, system: string, messages: Message[], context: LoopInput['context']): LoopInput {
  const { provider, tools, permissions, hooks, maxTurns, maxTokens, approvalTimeoutSeconds } = profile;
  return { provider, system, messages, tools, permissions, hooks, maxTurns, maxTokens, approvalTimeoutSeconds, context };
}

/** What the run's tools may use: its signal, its person, how to ask them and send them files. */
function toolContext(profile: RunProfile, sessionKey: string, options: SubmitOptions): Omit<ToolContext, 'progress'> {
  return {
    signal: options.signal,
    isSensitivePath: (path, resolved) => profile.permissions.isSensitivePath?.(path, resolved) ?? false,
    workspace: profile.workspace,
    sessionKey,
    userId: options.userId,
    interaction: options.interaction,
    sendFile: options.sendFile,
    ...(options.inGroup ? { inGroup: true } : {}),
    ...(options.chat ? { chat: options.chat } : {}),
  };
}

/** The last request's usage, when no message carried it (an error, a stop, a shutdown). */
function writeUsage(state: SessionState): void {
  try {
    state.writeUsage();
  } catch {
    // The store is gone (hob is closing): the tokens were counted, their row is lost with it.
  }
}

/**
 * A run the person stopped is closed in the history: what the model had written is kept as
 * its answer, with a note that the person stopped it, so the next message is a new turn and
 * the model does not take the stopped work up again (also after a restart).
 */
function closeStopped(state: SessionState, partial: string, personId: string): boolean {
  try {
    const last = state.history.at(-1);
    if (!last) return false;
    if (last.role === 'assistant') {
      const calls = toolUses(last);
      if (calls.length === 0) return false;
      state.append({ role: 'user', content: calls.map((call) => cancelledResult(call)) });
    }
    const said = partial.trim();
    state.append({ role: 'assistant', content: [text(said ? `${said}\n\n${STOPPED_NOTE}` : STOPPED_NOTE)] }, { run: 'ends', personId });
    return true;
  } catch {
    return false; // the store is gone (hob is closing)
  }
}
