import { accessSync, constants, statSync } from 'node:fs';

/** Whether `path` is a file this process may execute (looked at, not run). */
export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
