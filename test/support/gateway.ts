import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.js';
import { noHooks } from '../../src/engine/ports.js';
import { QueryEngine, type EngineDeps } from '../../src/engine/query-engine.js';
import type { ChannelAdapter } from '../../src/gateway/channel.js';
import { Gateway, type GatewayOptions } from '../../src/gateway/gateway.js';
import { createLogger } from '../../src/logger.js';
import { createPermissionAdmin } from '../../src/policy/permission-admin.js';
import { createPermissionChecker } from '../../src/policy/permissions.js';
import type { ProviderClient } from '../../src/providers/types.js';
import type { Db } from '../../src/store/sqlite/db.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { bashTool } from '../../src/tools/bash.js';
import { ToolRegistry, type AnyTool } from '../../src/tools/tool.js';
import { tempDir } from './engine.js';
import { migratedDbFile } from './migrated-db.js';

export const OWNER = { id: '100', name: 'Ann' };
export const FRIEND = { id: '200', name: 'Bob' };
export const STRANGER = { id: '300', name: 'Eve' };

export type TestGateway = { gateway: Gateway; store: SqliteStore; db: Db; dir: string; deps: EngineDeps; close(): Promise<void> };

/**
 * A gateway over a real SQLite file and the real permission checker (default mode: bash
 * asks), with the given adapter and model. Owner Ann and friend Bob are allowed. Busy signs
 * and live answers show from the start of a run (`busyAfterMs: 0`), as the tests of typing
 * and live answers need with an instant model; pass `busyAfterMs: BUSY_AFTER_MS` for hob's
 * own delay (test/adapters/quick-and-slow-answers.test.ts).
 */
export async function startTestGateway(
  adapter: ChannelAdapter,
  provider: ProviderClient,
  overrides: Partial<GatewayOptions> & { tools?: AnyTool[]; dir?: string } = {},
): Promise<TestGateway> {
  const dir = overrides.dir ?? tempDir('hob-gw-');
  const store = openSqliteStore(migratedDbFile(join(dir, 'hob.db')), { clock: systemClock });
  const db = store.db;
  const workspace = join(dir, 'workspace');
  const rules = store.permissionRules;
  const permissions = createPermissionChecker(
    { mode: 'default', allowed_tools: [], denied_tools: [], path_rules: [], denied_commands: [] },
    { workspace, home: join(dir, 'home'), alwaysRules: rules.all().map(({ userId, rule }) => ({ ...rule, userId })) },
  );
  const deps: EngineDeps = {
    provider,
    tools: new ToolRegistry(overrides.tools ?? [bashTool({ defaultTimeoutSeconds: 30 })]),
    permissions: { evaluate: (query) => permissions.evaluate(query), rememberAlways: (userId, rule) => rules.add(userId, permissions.addAlwaysRule(userId, rule)),
      isSensitivePath: (path, resolved) => permissions.isSensitivePath(path, resolved),
    },
    hooks: noHooks,
    conversations: store.conversations,
    systemPrompt: () => 'system',
    costUsd: () => 0,
    workspace,
    maxTurns: 10,
    maxTokens: 1000,
    approvalTimeoutSeconds: overrides.approvalTimeoutSeconds ?? 30,
  };
  const { mkdirSync } = await import('node:fs');
  mkdirSync(workspace, { recursive: true });
  const gateway = new Gateway({
    store,
    clock: systemClock,
    logger: createLogger({ level: 'silent', destination: 'silent' }),
    adapters: [adapter],
    access: new Map([[adapter.platform, { allowFrom: [OWNER.id, FRIEND.id], allowedGroups: [] }]]),
    engine: (key) => new QueryEngine(key, deps),
    workspace,
    busyMode: 'steer',
    groupSessions: 'per_user',
    maxQueue: 5,
    maxConversations: 1000,
    idleTimeoutSeconds: 3600,
    approvalTimeoutSeconds: 30,
    pairingTtlSeconds: 3600,
    model: { current: () => provider.model, switch: async (name) => `Switched to ${name}.` },
    permissions: createPermissionAdmin(permissions, rules, 'default'),
    delivery: { retryBaseMs: 50 },
    busyAfterMs: 0,
    ...overrides,
  });
  await gateway.start();
  return {
    gateway,
    store,
    db,
    dir,
    deps,
    close: async () => {
      await gateway.stop();
      store.close();
    },
  };
}
