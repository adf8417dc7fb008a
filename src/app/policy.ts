import { homedir } from 'node:os';
import { join } from 'node:path';
import type { HobConfig } from '../config/schema.js';
import { defaultConfigPath } from '../config/load.js';
import type { PermissionGate } from '../engine/ports.js';
import { createPermissionAdmin, type PermissionAdmin } from '../policy/permission-admin.js';
import { createPermissionChecker, type PermissionChecker } from '../policy/permissions.js';
import { createSandbox, type Sandbox } from '../policy/sandbox.js';
import { createSensitivePaths, type SensitivePaths } from '../policy/sensitive-paths.js';
import type { PermissionRuleRepository } from '../store/permission-rules.js';
import { sqlitePath } from '../store/settings.js';

/** What guards a hob's tools: the secret matcher, the bash sandbox, permissions and their "always" rules. */
export type AppPolicy = {
  sensitive: SensitivePaths;
  sandbox: Sandbox;
  permissions: PermissionChecker;
  /** The engine's view of the permissions: an "always" answer is stored as well as applied. */
  gate: PermissionGate;
  permissionAdmin: PermissionAdmin;
};

export function createAppPolicy(config: HobConfig, configPath: string | undefined, rules: PermissionRuleRepository): AppPolicy {
  const dbPath = sqlitePath(config.data_dir);
  // Every place a hob config (with its keys and tokens) may live, not only the one in use.
  const protectedPaths = [
    dbPath,
    `${dbPath}-wal`,
    `${dbPath}-shm`,
    join(config.data_dir, 'logs'),
    ...new Set([...(configPath ? [configPath] : []), defaultConfigPath(), join(config.data_dir, 'config.yaml')]),
  ];
  // One secret matcher: the permission checker and the sandbox share its walk of the disk.
  const sensitive = createSensitivePaths({ workspace: config.tools.workspace, home: homedir(), protectedPaths });
  const sandbox = createSandbox({ settings: config.permissions.sandbox, workspace: config.tools.workspace, home: homedir(), hiddenPaths: protectedPaths, dataDir: config.data_dir, sensitive });
  const permissions = createPermissionChecker(config.permissions, {
    workspace: config.tools.workspace,
    home: homedir(),
    protectedPaths,
    sensitive,
    alwaysRules: rules.all().map(({ userId, rule }) => ({ ...rule, userId })),
  });
  const permissionAdmin = createPermissionAdmin(permissions, rules, config.permissions.mode);
  const gate: PermissionGate = {
    evaluate: (query) => permissions.evaluate(query),
    rememberAlways: (userId, rule) => permissionAdmin.remember(userId, rule),
    isSensitivePath: (path, resolved) => permissions.isSensitivePath(path, resolved),
    mode: () => permissions.mode(),
  };
  return { sensitive, sandbox, permissions, gate, permissionAdmin };
}
