import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A top-level folder of the repository (`skills/`, `agents/`), found from a module's URL
 * whether it runs from source (src/<part>/) or from the bundle (dist/, whose chunks sit one
 * level below the top). Undefined when there is none.
 */
export function bundledFolder(name: string, from: string): string | undefined {
  let dir = dirname(fileURLToPath(from));
  for (let depth = 0; depth < 4; depth++) {
    const candidate = join(dir, name);
    if (existsSync(join(dir, 'package.json')) && existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return undefined;
}
