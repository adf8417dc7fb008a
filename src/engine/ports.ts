import type { AlwaysRule } from '../core/always-rule.js';
import type { HookEvent } from '../policy/hook-events.js';
import type { PermissionMode } from '../policy/permissions.js';
import type { PermissionDecision, PermissionQuery } from '../policy/types.js';

/** Re-exported: the gate's callers name the rule it stores from here. */
export type { AlwaysRule };

/** What the loop needs from the permission layer. */
export interface PermissionGate {
  evaluate(query: PermissionQuery): PermissionDecision;
  /** Called when the person chose "always allow"; persists the narrow rule. */
  rememberAlways(userId: string, rule: AlwaysRule): void;
  /** Secrets hob never shows (~/.ssh, credentials, its own config): tools that walk trees skip them. */
  isSensitivePath?(path: string, resolved?: boolean): boolean;
  /** The mode in force (default when absent): a worker's may be no looser. */
  mode?(): PermissionMode;
}

/** What the loop needs from the hooks layer. Must not throw. */
export interface HookGate {
  run(
    event: HookEvent,
    payload: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<{ blocked: boolean; reason?: string }>;
}

export const noHooks: HookGate = { run: async () => ({ blocked: false }) };
