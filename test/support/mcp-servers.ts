import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The entry script of an npm MCP server, from its package.json `bin` (never npx: no network in CI). */
export function mcpServerScript(pkg: '@modelcontextprotocol/server-everything' | '@modelcontextprotocol/server-filesystem'): string {
  const manifestPath = require.resolve(`${pkg}/package.json`);
  const manifest = require(manifestPath) as { bin: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : (Object.values(manifest.bin)[0] as string);
  return join(dirname(manifestPath), bin);
}

/** Config for server-everything over stdio. */
export function everythingServer() {
  return { command: process.execPath, args: [mcpServerScript('@modelcontextprotocol/server-everything'), 'stdio'], env: {}, enabled: true };
}

/** Config for server-filesystem over stdio, allowed to touch the given folders only. */
export function filesystemServer(...roots: string[]) {
  return { command: process.execPath, args: [mcpServerScript('@modelcontextprotocol/server-filesystem'), ...roots], env: {}, enabled: true };
}
