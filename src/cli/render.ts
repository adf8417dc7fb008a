import { assertNever, type AgentEvent } from '../core/events.js';
import type { EngineStatus } from '../engine/query-engine.js';
import { compactionNotice } from '../gateway/reply.js';

/** Writes agent events to a terminal (with a little colour) or as plain text for scripts. */
export class EventPrinter {
  private midLine = false;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly color: boolean,
  ) {}

  write(event: AgentEvent): void {
    switch (event.type) {
      case 'text_delta':
        this.out.write(event.text);
        this.midLine = !event.text.endsWith('\n');
        break;
      case 'tool_started':
        this.line(this.dim(`${event.worker ? `  ${event.worker} › ` : ''}→ ${event.name}: ${firstLine(event.summary, 160)}`));
        break;
      case 'tool_finished': {
        const seconds = (event.durationMs / 1000).toFixed(1);
        const mark = event.isError ? this.red(`✗ ${event.name} failed (${seconds}s): ${failureLine(event.content)}`) : this.dim(`✓ ${event.name} (${seconds}s)`);
        this.line(mark);
        break;
      }
      case 'tool_refused':
        // The person's own "n" or a timeout was already answered on the approval line.
        if (event.reason !== 'not approved' && event.reason !== 'no answer in time') {
          this.line(this.red(`✗ ${event.name}${event.summary ? `: ${firstLine(event.summary, 120)}` : ''} — ${firstLine(event.reason, 200)}`));
        }
        break;
      case 'retry':
        this.line(this.dim(`(model request failed: ${event.message}; retrying in ${Math.round(event.delayMs / 100) / 10}s)`));
        break;
      case 'compaction':
        this.line(this.dim(`(${compactionNotice(event.tokensBefore, event.tokensAfter)})`));
        break;
      case 'error':
        this.line(this.red(`Error: ${event.message}`));
        // The person at the terminal is the owner: the raw cause helps them fix it.
        if (event.detail) this.line(this.dim(`(${event.detail})`));
        break;
      case 'done':
        if (event.reason === 'aborted') this.line(this.dim('(stopped)'));
        else this.endLine();
        break;
      case 'assistant_message':
      case 'user_message':
      case 'tool_progress':
      case 'approval_requested':
      case 'usage':
        break;
      default:
        assertNever(event);
    }
  }

  /** Prints a line of its own, ending any streamed text first. */
  line(value: string): void {
    this.endLine();
    this.out.write(`${value}\n`);
  }

  endLine(): void {
    if (this.midLine) this.out.write('\n');
    this.midLine = false;
  }

  dim(value: string): string {
    return this.color ? `\x1b[2m${value}\x1b[22m` : value;
  }

  red(value: string): string {
    return this.color ? `\x1b[31m${value}\x1b[39m` : value;
  }

  bold(value: string): string {
    return this.color ? `\x1b[1m${value}\x1b[22m` : value;
  }
}

export function formatStatus(status: EngineStatus): string {
  const { usage } = status;
  return [
    `model ${status.model}`,
    `session ${status.sessionId}`,
    `${status.messages} messages`,
    `${formatCount(usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens)} tokens in, ${formatCount(usage.outputTokens)} out`,
    `cost $${status.costUsd.toFixed(4)}`,
    status.running ? 'running' : 'idle',
  ].join(' · ');
}

export function formatUsage(status: EngineStatus): string {
  const { usage } = status;
  return [
    `Requests: ${status.requests}`,
    `Input tokens: ${formatCount(usage.inputTokens)} (+ ${formatCount(usage.cacheReadTokens)} read from cache, ${formatCount(usage.cacheWriteTokens)} written to cache)`,
    `Output tokens: ${formatCount(usage.outputTokens)}`,
    `Cost: $${status.costUsd.toFixed(4)} (${status.model})`,
  ].join('\n');
}

const formatCount = (value: number) => value.toLocaleString('en-US');

/** The first line of a failed tool's output, and its closing note ("[exit code 2]", "[timed out …]") when it has one. */
function failureLine(content: string): string {
  const lines = content.trimEnd().split('\n');
  const note = lines.length > 1 && /^\[.*\]$/.test(lines.at(-1) ?? '') ? lines.at(-1) : undefined;
  const head = lines[0] ?? '';
  const shown = head.length > 120 ? `${head.slice(0, 120)}…` : head;
  return note ? `${shown}${lines.length > 2 ? ' …' : ''} ${note}` : firstLine(content, 160);
}

function firstLine(value: string, max: number): string {
  const line = value.split('\n', 1)[0] ?? '';
  const more = value.includes('\n') ? ' …' : '';
  return line.length > max ? `${line.slice(0, max)}…` : line + more;
}
