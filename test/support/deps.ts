import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.js';
import { noHooks } from '../../src/engine/ports.js';
import type { EngineDeps } from '../../src/engine/query-engine.js';
import { SqliteConversations } from '../../src/store/sqlite/conversations.js';
import { openDatabase, type Db } from '../../src/store/sqlite/db.js';
import { ToolRegistry, type AnyTool } from '../../src/tools/tool.js';
import type { ProviderClient } from '../../src/providers/types.js';
import { gate, tempDir } from './engine.js';
import { migratedDbFile } from './migrated-db.js';

/** Engine dependencies over a real SQLite file in a temp dir. */
export function engineDeps(provider: ProviderClient, tools: AnyTool[] = [], dir = tempDir()): EngineDeps & { db: Db; dir: string } {
  const db = openDatabase(migratedDbFile(join(dir, 'hob.db')));
  return {
    db,
    dir,
    provider,
    tools: new ToolRegistry(tools),
    permissions: gate(),
    hooks: noHooks,
    conversations: new SqliteConversations(db, systemClock),
    systemPrompt: () => 'system',
    costUsd: (_model, usage) => usage.inputTokens * 0.001,
    workspace: dir,
    maxTurns: 10,
    maxTokens: 1000,
    approvalTimeoutSeconds: 300,
  };
}
