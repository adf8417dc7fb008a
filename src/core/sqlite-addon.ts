import { createRequire } from 'node:module';

/**
 * The option that hands better-sqlite3 its compiled addon, found once. dist/ bundles
 * better-sqlite3's JavaScript with the rest of hob (compiled from the code cache with it: ~3 ms
 * where node's loader, reading its files one by one, took ~10), so the library no longer sits
 * beside its addon; left to itself it looks through the `bindings` package, which reads a stack
 * trace and tries a dozen paths, none of them dist/. An install that put the addon elsewhere
 * (none found here) still goes that way.
 */
export function sqliteAddon(): { nativeBinding?: string } {
  if (addonPath === undefined) {
    try {
      addonPath = createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');
    } catch {
      addonPath = null;
    }
  }
  return addonPath ? { nativeBinding: addonPath } : {};
}

let addonPath: string | null | undefined;
