/**
 * Files the engine writes into the workspace so nothing a person sent is lost to the window:
 * the whole of a text compaction cut short (`kept/`), and a message too big for the window
 * (`inbox/`, where attachments go too). The model reads them back with read_file.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeepText } from './compaction/levels.js';

/** `kept/<hash>.txt`: the same text is kept once, however often it is cut. */
export function keepInWorkspace(workspace: string): KeepText {
  return (text) => {
    const name = `kept/${createHash('sha256').update(text).digest('hex').slice(0, 16)}.txt`;
    try {
      mkdirSync(join(workspace, 'kept'), { recursive: true });
      const path = join(workspace, name);
      if (!existsSync(path)) writeFileSync(path, text, { mode: 0o600 });
      return name;
    } catch {
      return undefined; // the marker then points to session_search or a new run of the tool
    }
  };
}

/** Saves a message the window cannot hold; returns its workspace-relative path, or undefined. */
export function saveMessage(workspace: string, text: string, now = Date.now()): string | undefined {
  const name = `inbox/${now}-message.txt`;
  try {
    mkdirSync(join(workspace, 'inbox'), { recursive: true });
    writeFileSync(join(workspace, name), text, { mode: 0o600 });
    return name;
  } catch {
    return undefined;
  }
}
