import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TurnMemo } from '../core/turn-memo.js';

const DEFAULT_PERSONA = `# Persona

<!-- Who hob is. The owner may edit this file; a new session (/new) reads it again. -->

Your name is hob. You are a calm, capable personal assistant: direct, friendly, and honest
about what you do not know. You remember what people ask you to remember, and you use it
to help them without making a show of it.
`;

/** Where the persona lives: `data_dir/persona.md`. */
export const personaPath = (dataDir: string): string => join(dataDir, 'persona.md');

/** Writes the default persona when there is none yet (first start). */
export function ensurePersona(dataDir: string): void {
  const path = personaPath(dataDir);
  if (existsSync(path)) return;
  try {
    writeFileSync(path, DEFAULT_PERSONA, { flag: 'wx', mode: 0o644 });
  } catch (error) {
    // Another hob process wrote it first: theirs stands.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** The persona text as it is on disk now (comments left out); empty when unreadable. */
export function readPersona(dataDir: string): string {
  try {
    return readFileSync(personaPath(dataDir), 'utf8').replace(/<!--[\s\S]*?-->/g, '').trim();
  } catch {
    return '';
  }
}

/**
 * The persona as each new session reads it: read again only when the file changed (its
 * modification time, size or inode), so the owner's edit is in the next session while a burst
 * of new people costs one `stat` instead of a read and a parse each: the file is looked at once
 * per turn of the event loop (the sessions of one turn cannot tell its moments apart).
 */
export class PersonaFile {
  private readonly path: string;
  private known: { stamp: string; text: string } | undefined;
  /** The file as looked at in this turn of the event loop. */
  private readonly turn = new TurnMemo();

  constructor(private readonly dataDir: string) {
    this.path = personaPath(dataDir);
  }

  current(): string {
    return this.turn.get('persona', () => this.look());
  }

  private look(): string {
    const stats = statSync(this.path, { bigint: true, throwIfNoEntry: false });
    if (!stats) {
      this.known = undefined;
      return '';
    }
    const stamp = `${stats.mtimeNs}:${stats.ctimeNs}:${stats.size}:${stats.ino}`;
    if (this.known?.stamp !== stamp) this.known = { stamp, text: readPersona(this.dataDir) };
    return this.known.text;
  }
}
