/**
 * One MCP server: connects (stdio or streamable HTTP), lists its tools and keeps them fresh
 * (`tools/list_changed`), and restarts it with backoff when it dies. Never throws out of
 * its public methods except `callTool`/`readResource`, whose errors the tool adapters turn
 * into results for the model.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Resource, Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/extensions-schema.js';
import { errorMessage } from '../core/errors.js';

export type { McpToolInfo };

/**
 * starting: first connect in progress · ready: tools listed · restarting: it died, a
 * restart is scheduled or running · failed: it never came up (skipped) · stopped: hob closed it.
 */
export type McpServerState = 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

export type McpLogger = {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
};

export type ConnectionOptions = {
  logger?: McpLogger;
  /** First restart delay; doubles per failed attempt up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** How long connecting and listing may take before the start counts as failed. */
  startTimeoutMs?: number;
  /** Called whenever state or the tool list changes. */
  onChange?: () => void;
};

const CLIENT_INFO = { name: 'hob', version: '0.1.0' };

export class McpServerConnection {
  state: McpServerState = 'starting';
  tools: McpToolInfo[] = [];
  /** Why it failed or last died, in words. */
  lastError: string | undefined;
  restarts = 0;
  private client: Client | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly startTimeoutMs: number;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly options: ConnectionOptions = {},
  ) {
    this.backoffMs = options.backoffMs ?? 500;
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000;
    this.startTimeoutMs = options.startTimeoutMs ?? 30_000;
  }

  get transportKind(): 'stdio' | 'http' {
    return 'command' in this.config ? 'stdio' : 'http';
  }

  /** Connects and lists tools. Resolves when the server is ready or has failed; never rejects. */
  async start(): Promise<void> {
    try {
      await this.connect();
      this.setState('ready');
      this.options.logger?.info({ mcp: this.name, tools: this.tools.length }, 'MCP server ready');
    } catch (error) {
      if (this.closing) return;
      this.lastError = errorMessage(error);
      this.setState('failed');
      this.options.logger?.warn({ mcp: this.name, err: this.lastError }, 'MCP server failed to start; skipped');
    }
  }

  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): Promise<CallToolResult> {
    const client = this.readyClient();
    const result = await client.callTool({ name, arguments: args }, undefined, { signal, timeout: timeoutMs, resetTimeoutOnProgress: false });
    // The v1 SDK also allows a legacy `{ toolResult }` shape; hob only speaks the current one.
    if (!('content' in result) || !Array.isArray(result.content)) return { content: [{ type: 'text', text: JSON.stringify(result) }] };
    return result as CallToolResult;
  }

  async listResources(signal: AbortSignal, timeoutMs: number): Promise<Resource[]> {
    const client = this.readyClient();
    if (!client.getServerCapabilities()?.resources) return [];
    const resources: Resource[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor ? { cursor } : undefined, { signal, timeout: timeoutMs });
      resources.push(...page.resources);
      cursor = page.nextCursor;
    } while (cursor && resources.length < 500);
    return resources;
  }

  async readResource(uri: string, signal: AbortSignal, timeoutMs: number) {
    return this.readyClient().readResource({ uri }, { signal, timeout: timeoutMs });
  }

  /** The child's process id (stdio only), for tests and `hob mcp list`. */
  get pid(): number | undefined {
    const transport = this.client?.transport;
    return transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined;
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.restartTimer);
    this.setState('stopped');
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }

  /** Why a call cannot go through now, or undefined when it can. */
  unavailableReason(): string | undefined {
    switch (this.state) {
      case 'ready':
        return undefined;
      case 'starting':
        return `the MCP server "${this.name}" is still starting; try again in a moment`;
      case 'restarting':
        return `the MCP server "${this.name}" is unavailable: it stopped${this.lastError ? ` (${this.lastError})` : ''} and hob is restarting it; try again in a moment`;
      case 'failed':
        return `the MCP server "${this.name}" is unavailable: it failed to start (${this.lastError ?? 'unknown reason'})`;
      case 'stopped':
        return `the MCP server "${this.name}" is unavailable: hob is shutting down`;
    }
  }

  private readyClient(): Client {
    const reason = this.unavailableReason();
    if (reason || !this.client) throw new McpUnavailableError(reason ?? `the MCP server "${this.name}" is unavailable`);
    return this.client;
  }

  private async connect(): Promise<void> {
    const client = new Client(CLIENT_INFO, {
      listChanged: {
        tools: {
          onChanged: (error, tools) => {
            if (error || !tools || client !== this.client) return;
            this.tools = tools;
            this.options.logger?.info({ mcp: this.name, tools: tools.length }, 'MCP tool list changed');
            this.options.onChange?.();
          },
        },
      },
    });
    const transport = this.transport();
    const timeout = AbortSignal.timeout(this.startTimeoutMs);
    try {
      await withAbort(client.connect(transport, { signal: timeout, timeout: this.startTimeoutMs }), timeout, `did not answer within ${this.startTimeoutMs / 1000} s`);
      const tools: McpToolInfo[] = [];
      if (client.getServerCapabilities()?.tools) {
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : undefined, { signal: timeout, timeout: this.startTimeoutMs });
          tools.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor);
      }
      if (this.closing) {
        await client.close().catch(() => undefined);
        return;
      }
      this.client = client;
      this.tools = tools;
      client.onclose = () => this.onClosed(client);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
  }

  private transport(): Transport {
    const config = this.config;
    if ('command' in config) {
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: { ...getDefaultEnvironment(), ...config.env },
        cwd: config.cwd,
        stderr: 'pipe',
      });
      // A server's stderr is its log; keep the last lines to explain a crash.
      transport.stderr?.on('data', (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString()).slice(-1000);
      });
      return transport;
    }
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
  }
  private stderrTail = '';

  private onClosed(client: Client): void {
    if (this.closing || client !== this.client) return;
    this.client = undefined;
    const lastLine = this.stderrTail.trim().split('\n').at(-1);
    this.lastError = `the connection closed${lastLine ? `; its last log line: ${lastLine}` : ''}`;
    this.options.logger?.warn({ mcp: this.name, err: this.lastError }, 'MCP server stopped; restarting');
    this.setState('restarting');
    this.scheduleRestart(0);
  }

  private scheduleRestart(attempt: number): void {
    if (this.closing) return;
    const delay = Math.min(this.backoffMs * 2 ** attempt, this.maxBackoffMs);
    this.restartTimer = setTimeout(() => void this.restart(attempt), delay);
    this.restartTimer.unref();
  }

  private async restart(attempt: number): Promise<void> {
    try {
      await this.connect();
      if (this.closing) return;
      this.restarts += 1;
      this.setState('ready');
      this.options.logger?.info({ mcp: this.name, attempt: attempt + 1 }, 'MCP server restarted');
    } catch (error) {
      if (this.closing) return;
      this.lastError = errorMessage(error);
      this.options.logger?.warn({ mcp: this.name, attempt: attempt + 1, err: this.lastError }, 'MCP server restart failed; trying again later');
      this.scheduleRestart(attempt + 1);
    }
  }

  private setState(state: McpServerState): void {
    this.state = state;
    this.options.onChange?.();
  }
}

/** A call to a server that is starting, restarting, failed or stopped. */
export class McpUnavailableError extends Error {}

function withAbort<T>(promise: Promise<T>, signal: AbortSignal, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error(message));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
