import type { HookEvent } from '../policy/hook-events.js';
import type { PermissionDecision, PermissionQuery } from '../policy/types.js';

/** A rule `Always allow` adds for one person: the tool plus an exact command or a path prefix. */
export type AlwaysRule = { toolName: string; command?: string; pathPrefix?: string };

/** What the loop needs from the permission layer. */
export interface PermissionGate {
  evaluate(query: PermissionQuery): PermissionDecision;
  /** Called when the person chose "always allow"; persists the narrow rule. */
  rememberAlways(userId: string, rule: AlwaysRule): void;
  /** Secrets hob never shows (~/.ssh, credentials, its own config): tools that walk trees skip them. */
  isSensitivePath?(path: string, resolved?: boolean): boolean;
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
