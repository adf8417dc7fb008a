/**
 * What a hook is: the four kinds a config can name, and what running one gives back. The
 * runner (hooks.ts), the executors (hook-executor.ts) and the engine's judge all speak these
 * types, so they live apart from each of them (the runner imports the executors).
 */
import type { HookEvent } from './hook-events.js';

export type CommandHook = {
  type: 'command';
  command: string;
  timeout_seconds: number;
  matcher?: string;
  block_on_failure: boolean;
};
export type HttpHook = {
  type: 'http';
  url: string;
  headers: Record<string, string>;
  timeout_seconds: number;
  matcher?: string;
  block_on_failure: boolean;
};
/** The model reads `prompt` and the event's payload and answers ok or block with a reason. */
export type PromptHook = {
  type: 'prompt';
  prompt: string;
  /** A different (cheaper) model for the judgement; the conversation's model when unset. */
  model?: string;
  timeout_seconds: number;
  matcher?: string;
  block_on_failure: boolean;
};
/** Like a prompt hook, but the model may use read-only tools (read_file, grep, glob) before it answers. */
export type AgentHook = Omit<PromptHook, 'type'> & { type: 'agent'; max_turns: number };
export type ModelHook = PromptHook | AgentHook;
export type HookDefinition = CommandHook | HttpHook | PromptHook | AgentHook;

/** Runs prompt and agent hooks; lives with the engine (it needs the model). Must not throw. */
export type HookJudge = (hook: ModelHook, event: HookEvent, payload: Record<string, unknown>, signal?: AbortSignal) => Promise<HookOutcome>;
export type HooksConfig = Partial<Record<HookEvent, HookDefinition[]>>;

/** What running one hook gave: success or failure in words, and what it printed or answered. */
export type HookOutcome = {
  ok: boolean;
  /** stdout/stderr of a command, or the response body of an HTTP hook; trimmed and capped. */
  output: string;
  /** Why it failed, in words ("exited with code 1", "timed out after 5 s", "HTTP 500"). */
  failure?: string;
  exitCode?: number;
  status?: number;
  timedOut?: boolean;
  /** A prompt or agent hook's judgement; `block` blocks the call, with `output` as the reason. */
  verdict?: 'ok' | 'block';
};
