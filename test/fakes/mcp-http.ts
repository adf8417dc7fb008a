/**
 * An MCP server over streamable HTTP, built with the real SDK and bound to 127.0.0.1 port 0
 * (the reference server-everything binds every interface, so tests do not use it for HTTP).
 * Stateful: one transport per session, so the server can push `tools/list_changed`.
 *
 * With `files`, it also reads files the way permissive servers do, trusting whatever it is
 * given: `fetch` takes a `url` (a `file:` URL in any letter case is read from disk), `open`
 * a `target`, `read_document` a nested `options.path`; and it offers that folder's files as
 * `file://` resources, read by any `file:` URI.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListResourcesRequestSchema, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export type FakeMcpHttp = {
  url: string;
  /** Request headers seen, in order (to check configured headers arrive). */
  headers: Record<string, string | string[] | undefined>[];
  /** The notes add_note stored, in order (to see whether a writing call ran). */
  notes: string[];
  /** Adds a tool to every session and tells the clients the list changed. */
  addTool(name: string, reply: string): void;
  close(): Promise<void>;
};

export async function startFakeMcpHttp(options: { files?: string } = {}): Promise<FakeMcpHttp> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  const extraTools: { name: string; reply: string }[] = [];
  const headers: FakeMcpHttp['headers'] = [];
  const notes: string[] = [];

  function newServer(): McpServer {
    const server = new McpServer({ name: 'fake-http', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    server.registerTool(
      'add_note',
      { description: 'Store a note', inputSchema: { text: z.string().min(1), tags: z.array(z.string()).optional() }, annotations: { destructiveHint: false } },
      async ({ text }) => {
        notes.push(text);
        return { content: [{ type: 'text', text: `stored: ${text}` }] };
      },
    );
    server.registerTool(
      'count_notes',
      { description: 'How many notes there are', inputSchema: {}, annotations: { readOnlyHint: true } },
      async () => ({ content: [{ type: 'text', text: '3 notes' }] }),
    );
    for (const tool of extraTools) register(server, tool);
    if (options.files !== undefined) serveFiles(server, options.files);
    return server;
  }

  function register(server: McpServer, tool: { name: string; reply: string }): void {
    server.registerTool(tool.name, { description: `Says ${tool.reply}`, inputSchema: {}, annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text', text: tool.reply }],
    }));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    headers.push(req.headers);
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing) return existing.transport.handleRequest(req, res);
    if (req.method !== 'POST') {
      res.writeHead(400).end('no session');
      return;
    }
    const server = newServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, { transport, server }),
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    headers,
    notes,
    addTool(name, reply) {
      extraTools.push({ name, reply });
      for (const { server } of sessions.values()) register(server, { name, reply });
    },
    async close() {
      for (const { server } of sessions.values()) await server.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A path or a `file:` URL (any letter case: URL schemes are case-insensitive), read from disk. */
function readPathOrUrl(value: string): string {
  const path = /^file:/i.test(value) ? fileURLToPath(new URL(value)) : value;
  return readFileSync(path, 'utf8');
}

function answer(read: () => string) {
  try {
    return { content: [{ type: 'text' as const, text: read() }] };
  } catch (error) {
    return { content: [{ type: 'text' as const, text: String(error) }], isError: true };
  }
}

function serveFiles(server: McpServer, folder: string): void {
  server.registerTool('fetch', { description: 'Fetch a URL', inputSchema: { url: z.string() }, annotations: { readOnlyHint: true } }, async ({ url }) =>
    answer(() => (/^https?:/i.test(url) ? `fetched ${url}` : readPathOrUrl(url))),
  );
  server.registerTool('open', { description: 'Open a file', inputSchema: { target: z.string() }, annotations: { readOnlyHint: true } }, async ({ target }) =>
    answer(() => readPathOrUrl(target)),
  );
  server.registerTool(
    'read_document',
    { description: 'Read a document', inputSchema: { options: z.object({ path: z.string(), encoding: z.string().optional() }) }, annotations: { readOnlyHint: true } },
    async ({ options }) => answer(() => readPathOrUrl(options.path)),
  );
  server.server.registerCapabilities({ resources: {} });
  server.server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: readdirSync(folder, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => ({ uri: `file://${join(folder, entry.name)}`, name: entry.name })),
  }));
  server.server.setRequestHandler(ReadResourceRequestSchema, (request) => ({
    contents: [{ uri: request.params.uri, text: readPathOrUrl(request.params.uri) }],
  }));
}
