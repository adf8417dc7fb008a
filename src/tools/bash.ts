import { spawn } from 'node:child_process';
import { z } from 'zod';
import { stopReason } from '../core/shutdown.js';
import type { Sandbox } from '../policy/sandbox.js';
import { defineTool } from './tool.js';
import type { ToolContext, ToolOutput } from './tool.js';

export const BASH_MAX_TIMEOUT_SECONDS = 600;

export type BashToolOptions = {
  /** Used when the call gives no timeout_seconds; default 120, clamped to 600. */
  defaultTimeoutSeconds?: number;
  /** Environment of the commands; default: hob's own environment. */
  env?: NodeJS.ProcessEnv;
  /** Time between SIGTERM and SIGKILL of the process group; default 2000 ms. */
  killGraceMs?: number;
  /** Minimum time between two progress lines; default 1000 ms. */
  progressIntervalMs?: number;
  /** Characters kept from the start and from the end of the output each; default 50 000. */
  keepChars?: number;
  /** bubblewrap around every command (src/policy/sandbox.ts); none: commands run as hob. */
  sandbox?: Pick<Sandbox, 'wrap' | 'status'>;
};

const inputSchema = z.object({
  command: z.string().min(1).describe('The shell command to run with /bin/bash -c, in the workspace directory.'),
  timeout_seconds: z
    .number()
    .positive()
    .max(BASH_MAX_TIMEOUT_SECONDS)
    .optional()
    .describe(`Seconds before the command is stopped (max ${BASH_MAX_TIMEOUT_SECONDS}).`),
});

/**
 * `bash`: runs one command in its own process group, so a timeout or a cancel stops the
 * command and everything it started (no orphans). Processes the command leaves running in
 * the background are stopped too when it exits; `setsid` is the documented way out.
 */
export function bashTool(options: BashToolOptions = {}) {
  const defaultTimeout = Math.min(options.defaultTimeoutSeconds ?? 120, BASH_MAX_TIMEOUT_SECONDS);
  const tool = defineTool({
    name: 'bash',
    description: '',
    input: inputSchema,
    readOnly: false,
    target: (input) => ({ command: input.command }),
    run: (input, ctx) =>
      runCommand(input.command, ctx, {
        timeoutSeconds: input.timeout_seconds ?? defaultTimeout,
        env: options.env ?? process.env,
        killGraceMs: options.killGraceMs ?? 2000,
        progressIntervalMs: options.progressIntervalMs ?? 1000,
        keepChars: options.keepChars ?? 50_000,
        sandbox: options.sandbox,
      }),
  });
  // Whether the sandbox is active takes a bwrap run to learn (tens of ms): it is asked when the
  // model first needs the description, not while hob starts.
  return Object.defineProperty(tool, 'description', { enumerable: true, get: () => bashDescription(options.sandbox?.status().state === 'active', defaultTimeout) });
}

function bashDescription(sandboxed: boolean, defaultTimeout: number): string {
  return (
    'Run a shell command (bash) in the workspace directory. stdout and stderr are merged; the result ends ' +
    'with the exit code. ' +
    (sandboxed
      ? 'Commands run in a sandbox: the file system is read-only except the workspace and a private /tmp, ' +
        'secrets are hidden, and nothing the command starts outlives it. '
      : 'Background processes are stopped when the command exits (start long-running ' +
        'servers with setsid and redirect their output to a file). ') +
    `Default timeout ${defaultTimeout} s.`
  );
}

type RunSettings = {
  timeoutSeconds: number;
  env: NodeJS.ProcessEnv;
  killGraceMs: number;
  progressIntervalMs: number;
  keepChars: number;
  sandbox: Pick<Sandbox, 'wrap'> | undefined;
};

type Ending =
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null }
  | { kind: 'timeout' }
  | { kind: 'cancelled'; reason?: string }
  | { kind: 'spawn_failed'; message: string };

/** How long an exited shell's pipes may stay open (held by background children) before they are stopped. */
const DRAIN_MS = 200;

async function runCommand(command: string, ctx: ToolContext, settings: RunSettings): Promise<ToolOutput> {
  if (ctx.signal.aborted) return { content: 'cancelled before the command started', isError: true };

  // The outer shell only routes stderr into the stdout pipe and execs the real one, so both
  // streams share one pipe and arrive in the order they were written; the command's own
  // text (line numbers, $0) is untouched.
  const argv = ['/bin/bash', '-c', 'exec "$0" -c "$1" 2>&1', '/bin/bash', command];
  const program = settings.sandbox ? await settings.sandbox.wrap(argv) : { file: argv[0] ?? '/bin/bash', args: argv.slice(1), sandboxed: false };
  if ('refused' in program) return { content: program.refused, isError: true };
  // The sandbox may have waited for its first look at the secrets on disk.
  if (ctx.signal.aborted) return { content: 'cancelled before the command started', isError: true };

  return new Promise((resolve) => {
    const child = spawn(program.file, program.args, {
      cwd: ctx.workspace,
      env: settings.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = new HeadTailBuffer(settings.keepChars);
    const progress = progressThrottle(ctx, settings.progressIntervalMs);
    const timers: NodeJS.Timeout[] = [];
    let ending: Ending | undefined;
    let leftoversStopped = false;
    let stopping = false;
    let finished = false;

    const onData = (chunk: string) => {
      output.push(chunk);
      progress(chunk);
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);

    const finish = () => {
      if (finished) return;
      finished = true;
      for (const timer of timers) clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve(describe(output.text(), ending ?? { kind: 'cancelled' }, settings.timeoutSeconds, leftoversStopped));
    };

    /** SIGTERM the whole group, SIGKILL after the grace, and stop waiting for pipes a bit later. */
    const stopGroup = () => {
      if (stopping) return;
      stopping = true;
      const pid = child.pid;
      signalGroup(pid, 'SIGTERM');
      // Not cleared by finish(): a child that ignores SIGTERM but closed its output still gets killed.
      setTimeout(() => signalGroup(pid, 'SIGKILL'), settings.killGraceMs).unref();
      // A process that escaped the group (setsid) may still hold the pipe; do not wait for it forever.
      timers.push(setTimeout(finish, settings.killGraceMs + 500));
    };

    const onAbort = () => {
      const reason = stopReason(ctx.signal, '');
      ending ??= { kind: 'cancelled', ...(reason ? { reason } : {}) };
      stopGroup();
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    timers.push(
      setTimeout(() => {
        ending ??= { kind: 'timeout' };
        stopGroup();
      }, settings.timeoutSeconds * 1000),
    );

    child.on('error', (error) => {
      ending ??= { kind: 'spawn_failed', message: `${error.message} (in ${ctx.workspace})` };
      finish();
    });
    child.on('exit', (code, signal) => {
      ending ??= { kind: 'exited', code, signal };
      if (ending.kind !== 'exited') return;
      // Pipes still open after the shell exited mean background children are holding them.
      timers.push(
        setTimeout(() => {
          leftoversStopped = true;
          stopGroup();
        }, DRAIN_MS),
      );
    });
    child.on('close', () => {
      // In the sandbox, whatever the command left behind died with its PID namespace; what
      // remains in the group for a moment is bubblewrap's own teardown.
      if (program.sandboxed) signalGroup(child.pid, 'SIGKILL');
      else if (ending?.kind === 'exited' && !stopping && groupExists(child.pid)) {
        // Children that closed their output but kept running: stop them, no orphans.
        leftoversStopped = true;
        stopGroup();
      }
      finish();
    });
  });
}

function describe(text: string, ending: Ending, timeoutSeconds: number, leftoversStopped: boolean): ToolOutput {
  const body = text.length > 0 ? (text.endsWith('\n') ? text : `${text}\n`) : '(no output)\n';
  const leftovers = leftoversStopped
    ? '[background processes the command left running were stopped; start a long-running server with ' +
      'setsid and redirect its output to a file to keep it]\n'
    : '';
  switch (ending.kind) {
    case 'exited': {
      if (ending.code === null) {
        return { content: `${body}${leftovers}[terminated by signal ${ending.signal ?? 'unknown'}]`, isError: true };
      }
      return { content: `${body}${leftovers}[exit code ${ending.code}]`, isError: ending.code !== 0 };
    }
    case 'timeout':
      return {
        content: `${body}[timed out after ${timeoutSeconds}s; the command and its child processes were stopped]`,
        isError: true,
      };
    case 'cancelled':
      return { content: `${body}[cancelled${ending.reason ? ` (${ending.reason})` : ''}; the command and its child processes were stopped]`, isError: true };
    case 'spawn_failed':
      return { content: `Could not start bash: ${ending.message}`, isError: true };
    default: {
      const unreachable: never = ending;
      return unreachable;
    }
  }
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

function groupExists(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends the latest output line as progress, at most once per interval. */
function progressThrottle(ctx: ToolContext, intervalMs: number): (chunk: string) => void {
  let lastSent = 0;
  return (chunk) => {
    const now = Date.now();
    if (now - lastSent < intervalMs) return;
    const lines = chunk.split('\n').filter((line) => line.trim().length > 0);
    const line = lines[lines.length - 1];
    if (line === undefined) return;
    lastSent = now;
    ctx.progress(line.length > 200 ? `${line.slice(0, 200)}…` : line);
  };
}

/**
 * Keeps the first and the last `keep` characters of a stream, so a runaway command costs
 * bounded memory while the model still sees how it started and how it ended.
 */
export class HeadTailBuffer {
  private head = '';
  private tail = '';
  private dropped = 0;

  constructor(private readonly keep: number) {}

  push(chunk: string): void {
    let rest = chunk;
    if (this.head.length < this.keep) {
      const room = this.keep - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
    }
    if (rest.length === 0) return;
    this.tail += rest;
    // Trim in batches so each chunk does not copy the whole tail.
    if (this.tail.length > this.keep * 2) this.trimTail();
  }

  text(): string {
    this.trimTail();
    if (this.dropped === 0) return this.head + this.tail;
    return `${this.head}\n[… ${this.dropped} characters of output dropped …]\n${this.tail}`;
  }

  private trimTail(): void {
    if (this.tail.length <= this.keep) return;
    this.dropped += this.tail.length - this.keep;
    this.tail = this.tail.slice(this.tail.length - this.keep);
  }
}
