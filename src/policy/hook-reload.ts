/**
 * Hooks that follow the config file: when it changes, the hook section is read again and
 * swapped in for the next event, without a restart. A file that no longer loads keeps the
 * hooks in force and says why in the log.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { HookRunner, HooksConfig } from './hooks.js';

export type HookReloadLogger = {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
};

export type ReloadingHookRunner = HookRunner & {
  /** Reads the hooks again now; true when they changed. */
  reload(): boolean;
  /** Stops watching the file. */
  close(): void;
};

export function createReloadingHookRunner(options: {
  initial: HooksConfig;
  /** The config file to watch; nothing is watched without one. */
  configPath?: string;
  /** Reads the hooks from the file (throws when it does not load). */
  load(): HooksConfig;
  create(config: HooksConfig): HookRunner;
  logger?: HookReloadLogger;
  debounceMs?: number;
}): ReloadingHookRunner {
  let signature = JSON.stringify(options.initial);
  let current = options.create(options.initial);
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;

  function reload(): boolean {
    let next: HooksConfig;
    try {
      next = options.load();
    } catch (error) {
      options.logger?.warn({ err: error instanceof Error ? error.message.split('\n')[0] : String(error) }, 'config changed but does not load; the hooks in force stay');
      return false;
    }
    const nextSignature = JSON.stringify(next);
    if (nextSignature === signature) return false;
    signature = nextSignature;
    current = options.create(next);
    const counts = Object.fromEntries(Object.entries(next).map(([event, hooks]) => [event, hooks?.length ?? 0]));
    options.logger?.info({ hooks: counts }, 'hooks reloaded from the config file');
    return true;
  }

  if (options.configPath) {
    const file = basename(options.configPath);
    try {
      // The folder, not the file: editors save by replacing the file, which ends a file watch.
      watcher = watch(dirname(options.configPath), { persistent: false }, (_event, name) => {
        if (name !== null && name !== file) return;
        clearTimeout(timer);
        timer = setTimeout(reload, options.debounceMs ?? 100);
        timer.unref();
      });
      watcher.on('error', () => watcher?.close());
    } catch (error) {
      options.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'cannot watch the config file; hook changes need a restart');
    }
  }

  return {
    run: (event, payload, signal) => current.run(event, payload, signal),
    has: (event) => current.has(event),
    reload,
    close() {
      clearTimeout(timer);
      watcher?.close();
    },
  };
}

/** Config hooks first, then each plugin's, per event. */
export function mergeHooks(...configs: (HooksConfig | undefined)[]): HooksConfig {
  const merged: HooksConfig = {};
  for (const config of configs) {
    for (const [event, hooks] of Object.entries(config ?? {}) as [keyof HooksConfig, HooksConfig[keyof HooksConfig]][]) {
      if (hooks?.length) merged[event] = [...(merged[event] ?? []), ...hooks];
    }
  }
  return merged;
}
