import type { AlwaysRule } from '../../core/always-rule.js';
import type { Clock } from '../../core/clock.js';
import type { PermissionRuleRepository } from '../permission-rules.js';
import type { Db } from './db.js';

/** "Always allow" rules on SQLite (the port: ../permission-rules.ts). */
export class SqlitePermissionRules implements PermissionRuleRepository {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  add(userId: string, rule: AlwaysRule): void {
    // The table's UNIQUE lets rows with NULLs repeat, so a rule without a command or path is looked for first.
    this.db
      .prepare(
        `INSERT INTO permission_rules (user_id, tool_name, command, path_prefix, created_at) SELECT ?, ?, ?, ?, ?
         WHERE NOT EXISTS (SELECT 1 FROM permission_rules WHERE user_id = ? AND tool_name = ? AND command IS ? AND path_prefix IS ?)`,
      )
      .run(userId, rule.toolName, rule.command ?? null, rule.pathPrefix ?? null, this.clock.now(), userId, rule.toolName, rule.command ?? null, rule.pathPrefix ?? null);
  }

  remove(userId: string, rule: AlwaysRule): void {
    this.db
      .prepare('DELETE FROM permission_rules WHERE user_id = ? AND tool_name = ? AND command IS ? AND path_prefix IS ?')
      .run(userId, rule.toolName, rule.command ?? null, rule.pathPrefix ?? null);
  }

  all(): { userId: string; rule: AlwaysRule }[] {
    const rows = this.db
      .prepare<[], { user_id: string; tool_name: string; command: string | null; path_prefix: string | null }>(
        'SELECT user_id, tool_name, command, path_prefix FROM permission_rules ORDER BY id',
      )
      .all();
    return rows.map((row) => ({
      userId: row.user_id,
      rule: {
        toolName: row.tool_name,
        ...(row.command !== null ? { command: row.command } : {}),
        ...(row.path_prefix !== null ? { pathPrefix: row.path_prefix } : {}),
      },
    }));
  }

  forUser(userId: string): AlwaysRule[] {
    return this.all()
      .filter((entry) => entry.userId === userId)
      .map((entry) => entry.rule);
  }
}
