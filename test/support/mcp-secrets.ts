/**
 * A home with secrets in it, and the agent loop calling MCP tools over it with hob's real
 * secret matcher: shared by the MCP tests that prove no secret leaves through a tool's
 * arguments or answers (test/mcp/secret-arguments.test.ts over the HTTP fake,
 * test/mcp/mcp-servers.test.ts over the real server-filesystem).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runQuery } from '../../src/engine/run-query.js';
import { createPermissionChecker } from '../../src/policy/permissions.js';
import type { ToolRegistry } from '../../src/tools/tool.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { collect, ofType, queryParams, tempDir } from './engine.js';

/** A home with secrets the README names by place and by pattern, and one ordinary file. */
export function homeWithSecrets(): string {
  const home = tempDir('hob-mcp-secrets-');
  for (const dir of ['.ssh', 'certs', 'project']) mkdirSync(join(home, dir));
  writeFileSync(join(home, '.ssh', 'id_rsa'), 'SSH PRIVATE KEY');
  writeFileSync(join(home, 'certs', 'server.pem'), 'PEM PRIVATE KEY');
  writeFileSync(join(home, 'certs', 'ca.crt'), 'public certificate');
  writeFileSync(join(home, 'project', '.env'), 'DATABASE_PASSWORD=hunter2');
  writeFileSync(join(home, '.npmrc'), '//registry.npmjs.org/:_authToken=NPM-TOKEN');
  writeFileSync(join(home, 'notes.txt'), 'ordinary notes');
  return home;
}

export const SECRET_TEXT = /PRIVATE KEY|hunter2|NPM-TOKEN/;

/** Runs the scripted calls through the agent loop in full_auto, with hob's real secret matcher; returns each result. */
export async function callAll(registry: ToolRegistry, home: string, calls: { name: string; input: unknown }[][]): Promise<string[]> {
  const checker = createPermissionChecker({ mode: 'full_auto', allowed_tools: [], denied_tools: [], path_rules: [], denied_commands: [] }, { workspace: join(home, 'workspace'), home });
  const model = new ScriptedModel([...calls.map((toolCalls) => ({ toolCalls })), { text: 'ok' }]);
  const params = queryParams(model, [], { maxTurns: calls.length + 1, context: { isSensitivePath: (path, resolved) => checker.isSensitivePath(path, resolved) } });
  const events = await collect(runQuery({ ...params, tools: registry, permissions: { evaluate: checker.evaluate, rememberAlways: () => undefined } }));
  return ofType(events, 'user_message')
    .flatMap((event) => event.message.content)
    .flatMap((block) => (block.type === 'tool_result' ? [String(block.content)] : []));
}
