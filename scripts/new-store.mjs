// The SQLite file a first start on a data_dir copies (src/store/sqlite/db.ts): every migration
// applied at build time, by the store's own `migrate`, so a new file does not parse and write
// the whole schema on the way to the first answer (~10 ms). Built beside the bundle; a build
// where better-sqlite3 cannot run leaves it out, and a new file is then migrated as before.
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** Its name in dist/, beside the chunk that opens the store. */
export const NEW_STORE = 'new-store.db';

/** Writes `outdir/new-store.db`; false (and nothing written) when SQLite cannot run here. */
export async function writeNewStore(outdir) {
  const script = join(outdir, 'new-store-build.mjs');
  const path = join(outdir, NEW_STORE);
  try {
    // The store's migrate, bundled on its own with better-sqlite3 left to node_modules.
    await build({ entryPoints: ['src/store/sqlite/db.ts'], outfile: script, bundle: true, format: 'esm', platform: 'node', target: 'node20', external: ['better-sqlite3'], logLevel: 'silent' });
    const { migrate } = await import(pathToFileURL(script).href);
    const Database = createRequire(import.meta.url)('better-sqlite3');
    const db = new Database(path);
    try {
      migrate(db);
    } finally {
      db.close();
    }
    return true;
  } catch {
    rmSync(path, { force: true });
    return false;
  } finally {
    rmSync(script, { force: true });
  }
}
