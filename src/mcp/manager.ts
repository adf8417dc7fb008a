/**
 * Every configured MCP server of one hob process. `start()` returns at once: servers connect
 * in the background and their tools join the registry (one group per server) as each comes
 * up, so a slow server never holds up start-up. A dead server's tools stay registered and
 * answer "unavailable" until it is back, which keeps the tool list — and the prompt cache —
 * steady.
 */
import type { McpServerConfig } from '../config/extensions-schema.js';
import type { ToolRegistry } from '../tools/tool.js';
// Types only: the SDK loads on start(), and only when a server is configured.
import type { ConnectionOptions, McpLogger, McpServerConnection, McpServerState } from './connection.js';
import type { mcpTool as McpToolFactory } from './tools.js';

export type McpManagerOptions = {
  servers: Record<string, McpServerConfig>;
  callTimeoutSeconds: number;
  registry: ToolRegistry;
  logger?: McpLogger;
  /** Tests shorten the restart backoff. */
  connection?: Pick<ConnectionOptions, 'backoffMs' | 'maxBackoffMs' | 'startTimeoutMs'>;
};

export type McpServerStatus = {
  name: string;
  transport: 'stdio' | 'http';
  state: McpServerState;
  tools: string[];
  error?: string;
  restarts: number;
};

export class McpManager {
  connections: McpServerConnection[] = [];
  private started: Promise<void> | undefined;
  private makeTool: typeof McpToolFactory | undefined;
  private readonly configured: [string, McpServerConfig][];
  private closed = false;

  constructor(private readonly options: McpManagerOptions) {
    this.configured = Object.entries(options.servers).filter(([, config]) => config.enabled);
  }

  /** Starts every server in the background; the promise (also `ready()`) settles when all have answered or failed. Never rejects. */
  start(): Promise<void> {
    this.started ??= this.connectAll().catch((error: unknown) => {
      this.options.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'MCP could not be loaded');
    });
    return this.started;
  }

  private async connectAll(): Promise<void> {
    if (this.configured.length === 0) return;
    const [{ McpServerConnection: Connection }, { mcpTool, resourceTools }] = await Promise.all([import('./connection.js'), import('./tools.js')]);
    if (this.closed) return;
    this.makeTool = mcpTool;
    this.connections = this.configured.map(([name, config]) => {
      const connection: McpServerConnection = new Connection(name, config, {
        ...this.options.connection,
        logger: this.options.logger,
        onChange: () => this.refresh(connection),
      });
      return connection;
    });
    this.options.registry.replaceGroup('mcp:', resourceTools(() => this.connections, this.options.callTimeoutSeconds * 1000));
    await Promise.all(this.connections.map((connection) => connection.start()));
  }

  /** Settles once every server is ready or failed (for `hob mcp list` and tests). */
  ready(): Promise<void> {
    return this.start();
  }

  get(name: string): McpServerConnection | undefined {
    return this.connections.find((connection) => connection.name === name);
  }

  status(): McpServerStatus[] {
    if (this.connections.length === 0) {
      return this.configured.map(([name, config]) => ({ name, transport: 'command' in config ? 'stdio' : 'http', state: 'starting', tools: [], restarts: 0 }));
    }
    return this.connections.map((connection) => ({
      name: connection.name,
      transport: connection.transportKind,
      state: connection.state,
      tools: connection.tools.map((tool) => tool.name),
      ...(connection.lastError && connection.state !== 'ready' ? { error: connection.lastError } : {}),
      restarts: connection.restarts,
    }));
  }

  /** The same words for `hob mcp list` and `/mcp`. */
  describe(): string {
    const statuses = this.status();
    if (statuses.length === 0) return 'No MCP servers are configured. Add one under mcp.servers in the config (see the README, "Extensions").';
    return statuses
      .map((status) => {
        const head = `${status.name} (${status.transport}): ${status.state}${status.restarts ? `, restarted ${status.restarts}×` : ''}${status.error ? ` — ${status.error}` : ''}`;
        const tools = status.tools.length ? `\n  tools: ${status.tools.join(', ')}` : '';
        return head + tools;
      })
      .join('\n');
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.connections.map((connection) => connection.close()));
  }

  /** Re-registers one server's tools; an unchanged list keeps the same tool objects. */
  private refresh(connection: McpServerConnection): void {
    const group = `mcp:${connection.name}`;
    if (connection.state === 'failed' || connection.state === 'stopped') {
      this.options.registry.replaceGroup(group, []);
      return;
    }
    const signature = JSON.stringify(connection.tools);
    if (this.signatures.get(group) === signature) return;
    this.signatures.set(group, signature);
    const makeTool = this.makeTool;
    if (!makeTool) return;
    const tools = connection.tools.map((info) => makeTool(connection, info, this.options.callTimeoutSeconds * 1000));
    const skipped = this.options.registry.replaceGroup(group, tools);
    if (skipped.length) this.options.logger?.warn({ mcp: connection.name, skipped }, 'MCP tools skipped: their names are taken');
  }
  private readonly signatures = new Map<string, string>();
}
