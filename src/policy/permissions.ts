/**
 * The permission checker: a deterministic rule chain that says allow, deny or ask for one
 * tool call. The order follows the OpenHarness design, first hit wins:
 *
 *   1 sensitive paths (path or command words)  → deny, nothing overrides it
 *   2 denied_tools                             → deny
 *   3 allowed_tools                            → allow
 *   4 path_rules (first matching rule)         → allow / deny
 *   5 denied_commands                          → deny
 *   · the person's own "always" rules          → allow
 *   6 full_auto (people on allow_from only)     → allow
 *   7 read-only call                           → allow
 *   8 plan                                     → deny
 *   9 default                                  → ask
 *
 * "Always" rules sit below the denials on purpose: a button press in a chat can never
 * unlock a secret, a denied tool or a denied command.
 */
import { basename } from 'node:path';
import picomatch from 'picomatch';
import type { AlwaysRule } from '../core/always-rule.js';
import { commandCandidates, compileCommandPattern } from './command-patterns.js';
import { createSensitivePaths, isInside, type ResolvedTarget, type SensitivePaths } from './sensitive-paths.js';
import type { PermissionDecision, PermissionQuery } from './types.js';

export type PermissionMode = 'default' | 'plan' | 'full_auto';

export type PermissionSettings = {
  mode: PermissionMode;
  /** Tool names or globs (`mcp__github__*`) that are allowed in every mode. */
  allowed_tools: string[];
  /** Tool names or globs that are denied in every mode; beats allowed_tools. */
  denied_tools: string[];
  /**
   * Path globs, first match wins. A pattern with a slash is resolved against the workspace
   * (`~` expands); one without a slash matches the file name anywhere (`*.md`).
   */
  path_rules: { pattern: string; allow: boolean }[];
  /** Command globs where `*` matches anything, tried against each simple command too. */
  denied_commands: string[];
};

/** Re-exported: policy's callers name the rule from here. */
export type { AlwaysRule };

export type PermissionCheckerOptions = {
  workspace: string;
  /** Defaults to the real home directory; tests pass a temporary one. */
  home?: string;
  /** hob's own secrets: its config file, its SQLite database, data dir secrets. */
  protectedPaths?: string[];
  /** Rules loaded from the store at start-up. */
  alwaysRules?: (AlwaysRule & { userId: string })[];
  /** The secret matcher to use (the app shares one with the sandbox); default: one made from the options above. */
  sensitive?: SensitivePaths;
};

export type PermissionChecker = {
  /** Never throws; the reason is a sentence a person (and the model) can read. */
  evaluate(query: PermissionQuery): PermissionDecision;
  /** Adds a rule for that person only; returns it as stored (pathPrefix made absolute). */
  addAlwaysRule(userId: string, rule: AlwaysRule): AlwaysRule;
  listAlwaysRules(userId: string): AlwaysRule[];
  /** Takes back one of that person's rules; false when they have no such rule. */
  removeAlwaysRule(userId: string, rule: AlwaysRule): boolean;
  /** Replaces every person's rules (another process changed the stored ones). */
  replaceAlwaysRules(rules: (AlwaysRule & { userId: string })[]): void;
  /** The mode in force (the config's, until the owner switches it). */
  mode(): PermissionMode;
  setMode(mode: PermissionMode): void;
  /** For tools that walk directory trees: skip entries for which this says yes. */
  isSensitivePath(path: string, resolved?: boolean): boolean;
};

export function createPermissionChecker(
  settings: PermissionSettings,
  options: PermissionCheckerOptions,
): PermissionChecker {
  const sensitive = options.sensitive ?? createSensitivePaths(options);
  const deniedTool = toolMatcher(settings.denied_tools);
  const allowedTool = toolMatcher(settings.allowed_tools);
  const pathRules = settings.path_rules.map((rule) => ({
    ...rule,
    matches: pathRuleMatcher(rule.pattern, sensitive.resolveTarget),
  }));
  const deniedCommands = settings.denied_commands.map(compileCommandPattern);
  const alwaysRules = new Map<string, AlwaysRule[]>();
  let currentMode = settings.mode;

  function addAlwaysRule(userId: string, rule: AlwaysRule): AlwaysRule {
    const stored: AlwaysRule = { toolName: rule.toolName };
    if (rule.command !== undefined) stored.command = rule.command;
    if (rule.pathPrefix !== undefined) stored.pathPrefix = sensitive.resolveTarget(rule.pathPrefix).lexical;
    const list = alwaysRules.get(userId) ?? [];
    if (!list.some((r) => sameRule(r, stored))) list.push(stored);
    alwaysRules.set(userId, list);
    return { ...stored };
  }

  for (const { userId, ...rule } of options.alwaysRules ?? []) addAlwaysRule(userId, rule);

  function matchingAlwaysRule(query: PermissionQuery, target: ResolvedTarget | undefined): AlwaysRule | undefined {
    if (query.userId === undefined) return undefined;
    return alwaysRules.get(query.userId)?.find((rule) => {
      if (rule.toolName !== query.toolName) return false;
      if (rule.command !== undefined && rule.command !== query.command) return false;
      if (rule.pathPrefix !== undefined) {
        // Both forms must stay inside: `..` is already normalised away, and a symlink
        // under the prefix that points elsewhere does not inherit the approval.
        if (!target) return false;
        const prefix = sensitive.resolveTarget(rule.pathPrefix);
        if (!isInside(target.lexical, prefix.lexical) || !isInside(target.real, prefix.real)) return false;
      }
      return true;
    });
  }

  function evaluate(query: PermissionQuery): PermissionDecision {
    const tool = query.toolName;
    const path = query.path?.trim() ? query.path : undefined;
    const command = query.command?.trim() ? query.command : undefined;

    // 1. Sensitive paths, in the path and (best effort) in the command's words.
    const secret = (path && sensitive.check(path)) || (command && sensitive.checkCommand(command));
    if (secret) return deny(secret);

    // 2–3. Tool lists; the deny list wins.
    if (deniedTool(tool)) return deny(`${tool} is in denied_tools and is always denied`);
    if (allowedTool(tool)) return allow(`${tool} is in allowed_tools`);

    // 4. Path rules, first match wins.
    const target = path ? sensitive.resolveTarget(path) : undefined;
    if (target) {
      const shown = sensitive.display(target.lexical);
      for (const rule of pathRules) {
        // An allow must hold for the path as written and where it really leads;
        // a deny holds if either form matches.
        const hit = rule.allow
          ? rule.matches(target.lexical) && rule.matches(target.real)
          : rule.matches(target.lexical) || rule.matches(target.real);
        if (!hit) continue;
        return rule.allow
          ? allow(`${shown} matches the path rule "${rule.pattern}", which allows it`)
          : deny(`${shown} matches the path rule "${rule.pattern}", which denies it`);
      }
    }

    // 5. Denied commands, against the whole command and each simple command.
    if (command) {
      const candidates = commandCandidates(command);
      for (const pattern of deniedCommands) {
        const hit = candidates.find((candidate) => pattern.test(candidate));
        if (hit !== undefined) return deny(`"${hit}" matches the denied command pattern "${pattern.pattern}"`);
      }
    }

    // · The person's own standing approvals.
    const always = matchingAlwaysRule({ ...query, command }, target);
    if (always) {
      const scope =
        always.command !== undefined
          ? 'this exact command'
          : always.pathPrefix !== undefined
            ? `paths under ${sensitive.display(always.pathPrefix)}`
            : 'every call';
      return allow(`you chose "allow always" for ${tool} on ${scope}`);
    }

    // 6–9. The mode decides what is left.
    const mode = currentMode;
    if (mode === 'full_auto' && query.trusted !== false) return allow(`full_auto mode allows ${tool}`);
    if (query.readOnly) return allow(`${tool} is read-only, so it runs without asking`);
    switch (mode) {
      case 'full_auto':
        return { behavior: 'ask', reason: `full_auto applies only to people on allow_from, so an owner approves this ${tool} call` };
      case 'plan':
        return deny(`plan mode allows only read-only tools, and this ${tool} call would change things`);
      case 'default':
        return { behavior: 'ask', reason: `${tool} asks for approval in default mode` };
      default: {
        const unknown: never = mode;
        return deny(`unknown permission mode ${String(unknown)}`);
      }
    }
  }

  return {
    evaluate(query) {
      try {
        return evaluate(query);
      } catch (error) {
        // A checker that cannot decide must not let the call through.
        return deny(`the permission check failed (${error instanceof Error ? error.message : String(error)})`);
      }
    },
    addAlwaysRule,
    listAlwaysRules: (userId) => (alwaysRules.get(userId) ?? []).map((rule) => ({ ...rule })),
    removeAlwaysRule(userId, rule) {
      const list = alwaysRules.get(userId) ?? [];
      const index = list.findIndex((candidate) => sameRule(candidate, rule));
      if (index < 0) return false;
      list.splice(index, 1);
      return true;
    },
    replaceAlwaysRules(rules) {
      alwaysRules.clear();
      for (const { userId, ...rule } of rules) addAlwaysRule(userId, rule);
    },
    mode: () => currentMode,
    setMode(mode) {
      currentMode = mode;
    },
    isSensitivePath: (path, resolved) => sensitive.isSensitive(path, resolved),
  };
}

function allow(reason: string): PermissionDecision {
  return { behavior: 'allow', reason };
}

function deny(reason: string): PermissionDecision {
  return { behavior: 'deny', reason };
}

function toolMatcher(patterns: string[]): (tool: string) => boolean {
  if (patterns.length === 0) return () => false;
  const exact = new Set(patterns);
  const glob = picomatch(patterns);
  return (tool) => exact.has(tool) || glob(tool);
}

/**
 * A pattern without a slash matches the file name (picomatch's own `basename` option
 * mishandles absolute patterns, so it is done here); one with a slash matches the absolute path.
 */
function pathRuleMatcher(pattern: string, resolveTarget: (path: string) => ResolvedTarget): (path: string) => boolean {
  if (!pattern.includes('/')) {
    const matches = picomatch(pattern, { dot: true });
    return (path) => matches(basename(path));
  }
  return picomatch(anchorPattern(pattern, resolveTarget), { dot: true });
}

/** Slash patterns become absolute: workspace-relative, `~` expanded, glob part untouched. */
function anchorPattern(pattern: string, resolveTarget: (path: string) => ResolvedTarget): string {
  if (pattern.startsWith('/')) return pattern;
  // Resolve only the literal head so glob characters survive untouched.
  const globAt = pattern.search(/[*?[{(!]/);
  const head = globAt === -1 ? pattern : pattern.slice(0, pattern.lastIndexOf('/', globAt) + 1);
  const rest = pattern.slice(head.length);
  const base = head ? resolveTarget(head).lexical : resolveTarget('.').lexical;
  return rest ? `${base.replace(/\/$/, '')}/${rest}` : base;
}

function sameRule(a: AlwaysRule, b: AlwaysRule): boolean {
  return a.toolName === b.toolName && a.command === b.command && a.pathPrefix === b.pathPrefix;
}
