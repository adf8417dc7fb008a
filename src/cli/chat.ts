import { createInterface, type Interface } from 'node:readline';
import { errorMessage } from '../core/errors.js';
import { platformOf } from '../core/person.js';
import type { AgentEvent } from '../core/events.js';
import type { App } from '../app.js';
import type { QueryEngine } from '../engine/query-engine.js';
import type { Logger } from '../logger.js';
import type { ApprovalRequest, Decision, Interaction } from '../policy/types.js';
import { HELP, helpText, runChatCommand, type ChatCommandContext } from './chat-commands.js';
import { consoleSessionKey, consoleUserId } from './console-identity.js';
import { EventPrinter, formatStatus, formatUsage } from './render.js';

export type ChatOptions = ChatCommandContext & {
  logger: Logger;
  approvalTimeoutSeconds: number;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  /** Defaults to whether input and output are terminals. */
  interactive?: boolean;
};

/** The terminal's own conversation with a built app, as `hob chat` and `hob start` in a terminal hold it. */
export function terminalChat(app: App): ChatOptions {
  return {
    engine: app.engine(consoleSessionKey()),
    userId: consoleUserId(),
    logger: app.logger,
    approvalTimeoutSeconds: app.config.permissions.approval_timeout_seconds,
    permissions: app.permissionAdmin,
    memory: app.memory,
    extensions: app.extensions,
    jobs: app.scheduling.access,
    archive: app.store.archive,
  };
}

/**
 * A conversation in the terminal. In a terminal: a prompt, streamed answers, y/a/n approvals,
 * Ctrl-C stops the run. Piped: one message per line, plain text out, approvals read from the
 * next line — so it can be scripted.
 */
export async function runChat(options: ChatOptions): Promise<void> {
  const session = new ConsoleSession(options);
  await session.run();
}

class ConsoleSession {
  private readonly engine: QueryEngine;
  private readonly printer: EventPrinter;
  private readonly rl: Interface;
  private readonly tty: boolean;
  private readonly lines = new LineQueue();
  private pendingAnswer: ((line: string | undefined) => void) | undefined;
  private run_: AbortController | undefined;
  private lastInterrupt = 0;

  constructor(private readonly options: ChatOptions) {
    const input = options.input ?? process.stdin;
    const output = options.output ?? process.stdout;
    this.tty = options.interactive ?? Boolean((input as NodeJS.ReadStream).isTTY && (output as NodeJS.WriteStream).isTTY);
    this.engine = options.engine;
    this.printer = new EventPrinter(output, this.tty);
    this.rl = createInterface({ input, output: this.tty ? output : undefined, terminal: this.tty });
    this.rl.on('line', (line) => this.onLine(line));
    this.rl.on('close', () => {
      this.pendingAnswer?.(undefined);
      this.lines.close();
    });
    this.rl.on('SIGINT', () => this.onInterrupt());
    if (!this.tty) process.on('SIGINT', () => this.onInterrupt());
  }

  async run(): Promise<void> {
    if (this.tty) this.printer.line(this.printer.dim(`hob · ${this.engine.status().model} · /help for commands`));
    if (this.engine.hasPendingWork()) {
      this.printer.line(this.printer.dim('(resuming the run that was interrupted)'));
      await this.consume((signal) => this.engine.continuePending(this.submitOptions(signal)));
    }
    this.prompt();
    for (let line = await this.lines.next(); line !== undefined; line = await this.lines.next()) {
      if (!line) continue;
      await this.handle(line);
      this.prompt();
    }
    this.rl.close();
  }

  private onLine(raw: string): void {
    const line = raw.trim();
    // Piped input is one ordered stream: messages and approval answers alike, in turn.
    if (!this.tty) return this.lines.push(line);
    if (this.pendingAnswer) return this.pendingAnswer(line);
    if (!line) return this.prompt();
    if (this.run_) {
      // While a run is busy, a terminal user can stop it, look at it, or steer it.
      switch (line) {
        case '/stop':
          return this.stop();
        case '/status':
          return this.printer.line(formatStatus(this.engine.status()));
        case '/usage':
          return this.printer.line(formatUsage(this.engine.status()));
        case '/help':
          return this.printer.line(HELP);
        case '/exit':
        case '/quit':
          this.stop();
          return this.lines.push(line);
      }
      if (/^\/[a-z]+(\s|$)/.test(line)) {
        return this.printer.line(this.printer.dim(`(${line.split(/\s/)[0]} has to wait until this answer is done; /stop stops it)`));
      }
      this.engine.steer(line);
      this.printer.line(this.printer.dim('(noted; hob will read this at its next step)'));
      return;
    }
    this.lines.push(line);
  }

  private onInterrupt(): void {
    if (this.run_) return this.stop();
    if (this.pendingAnswer) return this.pendingAnswer('n');
    const now = Date.now();
    if (now - this.lastInterrupt < 2000 || !this.tty) {
      this.rl.close();
      return;
    }
    this.lastInterrupt = now;
    this.printer.line(this.printer.dim('(press Ctrl-C again or type /exit to quit)'));
    this.prompt();
  }

  private stop(): void {
    this.run_?.abort();
  }

  private async handle(line: string): Promise<void> {
    switch (line) {
      case '/exit':
      case '/quit':
        this.rl.close();
        return;
      case '/help':
        return this.printer.line(helpText(this.options.extensions));
      case '/new':
        this.engine.reset();
        return this.printer.line('Started a new conversation.');
      case '/stop':
        return this.printer.line('Nothing is running.');
      case '/status':
        return this.printer.line(formatStatus(this.engine.status()));
      case '/usage':
        return this.printer.line(formatUsage(this.engine.status()));
    }
    const outcome = await runChatCommand(line, this.options);
    if (outcome.kind === 'reply') return this.printer.line(outcome.text);
    await this.consume((signal) => this.engine.submit(outcome.text, this.submitOptions(signal)));
  }

  private async consume(start: (signal: AbortSignal) => AsyncIterable<AgentEvent>): Promise<void> {
    const controller = new AbortController();
    this.run_ = controller;
    try {
      for await (const event of start(controller.signal)) this.printer.write(event);
    } catch (error) {
      this.options.logger.error({ session: this.engine.sessionKey, err: error }, 'console run failed');
      this.printer.line(this.printer.red(`Error: ${errorMessage(error)}`));
    } finally {
      this.run_ = undefined;
      this.printer.endLine();
    }
  }

  private submitOptions(signal: AbortSignal) {
    // A background task started from here prints its result here (the console outlet, under hob start).
    return { userId: this.options.userId, interaction: this.interaction, signal, chat: { platform: platformOf(this.engine.sessionKey), chatId: this.options.userId } };
  }

  private readonly interaction: Interaction = {
    confirm: (request, signal) => this.confirm(request, signal),
    choose: async (question, choices, signal) => {
      this.printer.line(`${question}\n${choices.map((choice, i) => `  ${i + 1}. ${choice}`).join('\n')}`);
      const answer = (await this.ask('Your answer › ', signal)) ?? '';
      const picked = Number.parseInt(answer, 10);
      return choices[picked - 1] ?? answer;
    },
  };

  private async confirm(request: ApprovalRequest, signal: AbortSignal): Promise<Decision> {
    this.printer.line(
      `${this.printer.bold(request.worker ? `${request.worker} (a worker) wants to run ${request.toolName}. Allow?` : `Allow ${request.toolName}?`)} ${this.printer.dim(`(${request.reason})`)}\n  ${request.summary.split('\n').join('\n  ')}`,
    );
    const timeout = AbortSignal.timeout(this.options.approvalTimeoutSeconds * 1000);
    let decision: Decision | undefined;
    for (let question = '[y] once  [a] always  [n] no › '; decision === undefined; question = 'Please answer y (once), a (always) or n (no) › ') {
      const answer = await this.ask(question, AbortSignal.any([signal, timeout]));
      if (answer === undefined) {
        if (timeout.aborted) {
          this.printer.line(`(no answer within ${this.options.approvalTimeoutSeconds}s: denied)`);
          return 'timeout';
        }
        return 'deny';
      }
      // issue 7: anything else (a typo, a message meant for later) asks again instead of denying.
      decision = parseDecision(answer);
    }
    if (decision === 'deny') this.printer.line(this.printer.dim('(denied)'));
    return decision;
  }

  /** Reads the next line as an answer; undefined on abort, timeout or end of input. */
  private ask(question: string, signal: AbortSignal): Promise<string | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    this.printer.line(question.trimEnd());
    if (!this.tty) return this.lines.next(signal);
    return new Promise((resolve) => {
      const finish = (line: string | undefined) => {
        this.pendingAnswer = undefined;
        signal.removeEventListener('abort', onAbort);
        resolve(line);
      };
      const onAbort = () => finish(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      this.pendingAnswer = finish;
    });
  }

  private prompt(): void {
    if (this.tty && !this.run_) {
      this.rl.setPrompt('you › ');
      this.rl.prompt();
    }
  }
}

/** y, a or n (and their long forms); undefined for any other answer. */
export function parseDecision(answer: string): Decision | undefined {
  const normalized = answer.trim().toLowerCase();
  if (normalized === 'y' || normalized === 'yes') return 'allow_once';
  if (normalized === 'a' || normalized === 'always') return 'allow_always';
  if (normalized === 'n' || normalized === 'no') return 'deny';
  return undefined;
}

/** Lines in arrival order; `next` waits for one, or gives undefined at end of input or abort. */
class LineQueue {
  private readonly items: string[] = [];
  private waiter: ((line: string | undefined) => void) | undefined;
  private closed = false;

  push(line: string): void {
    if (this.waiter) this.waiter(line);
    else this.items.push(line);
  }

  close(): void {
    this.closed = true;
    this.waiter?.(undefined);
  }

  next(signal?: AbortSignal): Promise<string | undefined> {
    if (this.items.length) return Promise.resolve(this.items.shift());
    if (this.closed || signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const onAbort = () => finish(undefined);
      const finish = (line: string | undefined) => {
        this.waiter = undefined;
        signal?.removeEventListener('abort', onAbort);
        resolve(line);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiter = finish;
    });
  }
}
