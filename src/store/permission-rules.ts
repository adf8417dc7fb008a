/** "Always allow" rules in the Store port, per person, kept across restarts. */
import type { AlwaysRule } from '../core/always-rule.js';

export interface PermissionRuleRepository {
  add(userId: string, rule: AlwaysRule): void;
  remove(userId: string, rule: AlwaysRule): void;
  all(): { userId: string; rule: AlwaysRule }[];
  forUser(userId: string): AlwaysRule[];
}
