/**
 * Runs one hook and reports what happened. Never throws: every failure (spawn error,
 * timeout, network error, non-2xx) becomes a HookOutcome the runner can judge.
 */
import { spawn } from 'node:child_process';
import { withoutSecrets } from './child-env.js';
import type { CommandHook, HookOutcome, HttpHook } from './hook-definitions.js';
import type { HookEvent } from './hook-events.js';

export type { HookOutcome } from './hook-definitions.js';

/** Enough output to explain a refusal to the model, not enough to flood its context. */
const MAX_OUTPUT_CHARS = 2_000;
/** Linux refuses a single environment string over 128 KiB (MAX_ARG_STRLEN). */
const MAX_ENV_PAYLOAD_CHARS = 100_000;

export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * `/bin/sh -c command` in its own process group (so a timeout kills its children too).
 * The payload reaches the hook three ways: `$ARGUMENTS` in the command text replaced by
 * the single-quoted JSON (use it unquoted), HOB_HOOK_PAYLOAD in the environment (omitted
 * when too large for one), and always on stdin.
 */
export function runCommandHook(
  hook: CommandHook,
  event: HookEvent,
  payload: Record<string, unknown>,
  options: { cwd: string; signal?: AbortSignal; secretEnv?: readonly string[] },
): Promise<HookOutcome> {
  const json = JSON.stringify(payload);
  const command = hook.command.replaceAll('$ARGUMENTS', shellQuote(json));
  const env: NodeJS.ProcessEnv = { ...withoutSecrets(process.env, options.secretEnv), HOB_HOOK_EVENT: event };
  if (json.length <= MAX_ENV_PAYLOAD_CHARS) env.HOB_HOOK_PAYLOAD = json;

  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let aborted = false;
    let settled = false;

    let child: ReturnType<typeof spawn>;
    try {
      child = spawn('/bin/sh', ['-c', command], { cwd: options.cwd, env, detached: true, stdio: 'pipe' });
    } catch (error) {
      resolve({ ok: false, output: '', failure: `could not start: ${describe(error)}` });
      return;
    }

    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, hook.timeout_seconds * 1000);
    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const finish = (outcome: HookOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve(outcome);
    };

    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < MAX_OUTPUT_CHARS * 4) stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < MAX_OUTPUT_CHARS * 4) stderr += chunk;
    });
    // A hook that does not read stdin closes it early; that is not a failure.
    child.stdin?.on('error', () => {});
    child.stdin?.end(json);

    child.on('error', (error) => finish({ ok: false, output: '', failure: `could not start: ${describe(error)}` }));
    child.on('exit', (code, signal) => {
      const done = (): void => {
        const text = cap([stderr.trim(), stdout.trim()].filter(Boolean).join('\n'));
        const timeout = `timed out after ${hook.timeout_seconds} s`;
        if (timedOut) finish({ ok: false, output: text, timedOut: true, failure: timeout });
        else if (aborted) finish({ ok: false, output: text, failure: 'stopped because the run was stopped' });
        else if (code === 0) finish({ ok: true, output: text, exitCode: 0 });
        else if (code !== null) {
          finish({ ok: false, output: text, exitCode: code, failure: `exited with code ${code}` });
        }
        else finish({ ok: false, output: text, failure: `was killed by ${signal ?? 'a signal'}` });
      };
      // Let the pipes drain, but do not wait on background children that inherited them.
      child.once('close', done);
      setTimeout(done, 200);
    });
  });
}

/** POST `{event, payload}` as JSON; success is any 2xx within the timeout. */
export async function runHttpHook(
  hook: HttpHook,
  event: HookEvent,
  payload: Record<string, unknown>,
  options: { fetch: typeof fetch; signal?: AbortSignal },
): Promise<HookOutcome> {
  const timeout = AbortSignal.timeout(hook.timeout_seconds * 1000);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  try {
    const response = await options.fetch(hook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...hook.headers },
      body: JSON.stringify({ event, payload }),
      signal,
    });
    const body = cap((await response.text()).trim());
    if (response.ok) return { ok: true, output: body, status: response.status };
    return { ok: false, output: body, status: response.status, failure: `returned HTTP ${response.status}` };
  } catch (error) {
    if (timeout.aborted) {
      return { ok: false, output: '', timedOut: true, failure: `timed out after ${hook.timeout_seconds} s` };
    }
    if (options.signal?.aborted) return { ok: false, output: '', failure: 'stopped because the run was stopped' };
    return { ok: false, output: '', failure: `could not be reached: ${describe(error)}` };
  }
}

function cap(text: string): string {
  return text.length <= MAX_OUTPUT_CHARS ? text : `${text.slice(0, MAX_OUTPUT_CHARS)} […]`;
}

/** fetch wraps the interesting part (ECONNREFUSED) in `cause`. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
