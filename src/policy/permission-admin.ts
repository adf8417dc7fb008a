import type { PermissionRuleRepository } from '../store/permission-rules.js';
import type { AlwaysRule, PermissionChecker, PermissionMode } from './permissions.js';

const MODES: Record<PermissionMode, string> = {
  default: 'risky calls ask first',
  plan: 'only read-only tools run; everything else is refused',
  full_auto: 'every call runs without asking (the denials and sensitive paths still hold)',
};

/** Where a change made here is told, so other processes on the same database follow it. */
export type PermissionChanges = {
  rulesChanged(): void;
  modeSwitched(mode: PermissionMode): void;
};

/** `/permissions` in a chat or the terminal: what `args` asks, answered in words. */
export type PermissionAdmin = {
  command(args: string, userId: string): string;
  /** An "always" answer: stored and applied here, and announced. */
  remember(userId: string, rule: AlwaysRule): void;
  /** Another process changed the stored rules (or notices were lost): read them all again. */
  reload(): void;
  /** Another process switched the mode; an unknown name is ignored (a newer hob's mode). */
  applyMode(mode: string): void;
  /** Several processes: from now on each change made here is told to `changes`. */
  announceTo(changes: PermissionChanges): void;
};

/**
 * The owner's view of permissions: the mode (switchable until hob restarts; the config keeps
 * the lasting one) and each person's "always allow" rules, which they can take back. Every
 * change of rules or mode goes through here, so with several processes it is announced once.
 *
 *   /permissions                 mode and your rules, numbered
 *   /permissions mode plan       switch the mode for every conversation
 *   /permissions forget 2 | all  take back rule 2, or all of yours
 */
export function createPermissionAdmin(checker: PermissionChecker, rules: PermissionRuleRepository, configuredMode: PermissionMode): PermissionAdmin {
  // One process (SQLite): nobody else to tell.
  let changes: PermissionChanges | undefined;
  const show = (userId: string): string => {
    const mine = checker.listAlwaysRules(userId);
    const mode = checker.mode();
    return [
      `Permission mode: ${mode} — ${MODES[mode]}.${mode !== configuredMode ? ` (The config says ${configuredMode}; a restart goes back to it.)` : ''}`,
      mine.length ? 'Your "always allow" rules:' : 'You have no "always allow" rules.',
      ...mine.map((rule, index) => `${index + 1}. ${describeRule(rule)}`),
      '',
      `Switch with /permissions mode ${Object.keys(MODES).join('|')}${mine.length ? '; take a rule back with /permissions forget N (or all)' : ''}.`,
    ].join('\n');
  };

  const forget = (userId: string, which: string): string => {
    const mine = checker.listAlwaysRules(userId);
    const chosen = which === 'all' ? mine : /^\d+$/.test(which) ? [mine[Number(which) - 1]].filter((rule) => rule !== undefined) : [];
    if (chosen.length === 0) {
      return mine.length ? `There is no rule "${which}". Your rules are numbered 1 to ${mine.length}; see /permissions.` : 'You have no "always allow" rules to take back.';
    }
    for (const rule of chosen) {
      checker.removeAlwaysRule(userId, rule);
      rules.remove(userId, rule);
    }
    changes?.rulesChanged();
    return chosen.length === 1 ? `Taken back: ${describeRule(chosen[0] as AlwaysRule)}. It will ask again.` : `Took back all ${chosen.length} of your rules. Risky calls will ask again.`;
  };

  return {
    command(args, userId) {
      const [verb = '', value = ''] = args.trim().split(/\s+/);
      switch (verb.toLowerCase()) {
        case '':
          return show(userId);
        case 'mode': {
          if (!isMode(value)) return `Unknown mode "${value}". Choose one of: ${Object.keys(MODES).join(', ')}.`;
          checker.setMode(value);
          changes?.modeSwitched(value);
          return `Permission mode is now ${value}: ${MODES[value]}. This lasts until hob restarts; set permissions.mode in the config to keep it.`;
        }
        case 'forget':
        case 'revoke':
          return forget(userId, value.toLowerCase());
        default:
          return `Unknown /permissions option "${verb}". Use /permissions, /permissions mode ${Object.keys(MODES).join('|')}, or /permissions forget N.`;
      }
    },
    remember(userId, rule) {
      rules.add(userId, checker.addAlwaysRule(userId, rule));
      changes?.rulesChanged();
    },
    reload() {
      checker.replaceAlwaysRules(rules.all().map(({ userId, rule }) => ({ ...rule, userId })));
    },
    applyMode(mode) {
      if (isMode(mode)) checker.setMode(mode);
    },
    announceTo(sink) {
      changes = sink;
    },
  };
}

function isMode(value: string): value is PermissionMode {
  return Object.hasOwn(MODES, value);
}

function describeRule(rule: AlwaysRule): string {
  if (rule.command !== undefined) return `${rule.toolName}: exactly \`${rule.command}\``;
  if (rule.pathPrefix !== undefined) return `${rule.toolName} under ${rule.pathPrefix}`;
  return `${rule.toolName}: every call`;
}
