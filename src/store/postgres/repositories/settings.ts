/** "Always allow" rules, profiles and token calibration on PostgreSQL (the ports: permission-rules.ts, profiles.ts, token-calibration.ts). */
import type { AlwaysRule } from '../../../core/always-rule.js';
import type { Clock } from '../../../core/clock.js';
import type { PermissionRuleRepository } from '../../permission-rules.js';
import { PROFILE_FIELDS, type Profile, type ProfileField, type ProfileRepository } from '../../profiles.js';
import type { TokenCalibrationRepository } from '../../token-calibration.js';
import type { Sql } from '../sql.js';

export class PostgresPermissionRules implements PermissionRuleRepository {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  add(userId: string, rule: AlwaysRule): void {
    // The unique index treats an absent command or path as one value: the rule is kept once.
    this.sql.run('INSERT INTO permission_rules (user_id, tool_name, command, path_prefix, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', userId, rule.toolName, rule.command ?? null, rule.pathPrefix ?? null, this.clock.now());
  }

  remove(userId: string, rule: AlwaysRule): void {
    this.sql.run('DELETE FROM permission_rules WHERE user_id = ? AND tool_name = ? AND command IS NOT DISTINCT FROM ? AND path_prefix IS NOT DISTINCT FROM ?', userId, rule.toolName, rule.command ?? null, rule.pathPrefix ?? null);
  }

  all(): { userId: string; rule: AlwaysRule }[] {
    return this.sql.all<{ user_id: string; tool_name: string; command: string | null; path_prefix: string | null }>('SELECT user_id, tool_name, command, path_prefix FROM permission_rules ORDER BY id').map((row) => ({
      userId: row.user_id,
      rule: { toolName: row.tool_name, ...(row.command !== null ? { command: row.command } : {}), ...(row.path_prefix !== null ? { pathPrefix: row.path_prefix } : {}) },
    }));
  }

  forUser(userId: string): AlwaysRule[] {
    return this.all()
      .filter((entry) => entry.userId === userId)
      .map((entry) => entry.rule);
  }
}

export class PostgresProfiles implements ProfileRepository {
  constructor(private readonly sql: Sql) {}

  get(personId: string): Profile {
    const row = this.sql.get<Record<ProfileField, string | null>>('SELECT name, timezone, language, style, notes FROM profiles WHERE person_id = ?', personId);
    const profile: Profile = {};
    for (const field of PROFILE_FIELDS) if (row?.[field]) profile[field] = row[field];
    return profile;
  }

  set(personId: string, field: ProfileField, value: string | undefined, now: number): void {
    // The column name comes from the closed list of fields, never from the caller's text.
    if (!PROFILE_FIELDS.includes(field)) throw new Error(`unknown profile field ${String(field)}`);
    this.sql.run(`INSERT INTO profiles (person_id, ${field}, updated_at) VALUES (?, ?, ?) ON CONFLICT (person_id) DO UPDATE SET ${field} = excluded.${field}, updated_at = excluded.updated_at`, personId, value ?? null, now);
  }

  clear(personId: string): void {
    this.sql.run('DELETE FROM profiles WHERE person_id = ?', personId);
  }
}

export class PostgresTokenCalibration implements TokenCalibrationRepository {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  load(model: string): unknown {
    try {
      const row = this.sql.get<{ state: string }>('SELECT state FROM token_calibration WHERE model = ?', model);
      return row ? (JSON.parse(row.state) as unknown) : undefined;
    } catch {
      return undefined; // a damaged row only means learning again
    }
  }

  save(model: string, state: unknown): void {
    try {
      this.sql.run('INSERT INTO token_calibration (model, state, updated_at) VALUES (?, ?, ?) ON CONFLICT (model) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at', model, JSON.stringify(state), this.clock.now());
    } catch {
      // The store is closing, or the database is away; what was learnt since the last save is learnt again.
    }
  }
}
