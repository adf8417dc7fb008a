import type { HobConfig } from '../config/schema.js';
import { systemClock } from '../core/clock.js';
import { UserFacingError } from '../core/errors.js';
import { createLogger } from '../logger.js';
import { entryLine, Memory } from '../memory/memory.js';
import { openStore } from '../store/open.js';
import { consoleUserId } from './console-identity.js';

/**
 * The export's format, with the YAML library that writes and reads it (its own chunk: the
 * other commands, and the terminal's chat that shares this module, never load it).
 */
const markdown = () => import('../memory/markdown.js');

/**
 * `hob memory list | search QUERY | export DIR | import DIR` for the person at the terminal
 * (the owner), or for `--person ID` (a person id like telegram:42). Works on the database
 * directly, also while `hob start` runs.
 */
export async function runMemory(
  config: HobConfig,
  verb: string,
  value: string | undefined,
  flags: { person?: string; limit?: string },
  out: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  const store = openStore({ dataDir: config.data_dir, store: config.store }, { clock: systemClock });
  const memory = new Memory({
    store,
    clock: systemClock,
    logger: createLogger({ dataDir: config.data_dir, level: config.log_level }),
    dataDir: config.data_dir,
    defaultTimezone: config.timezone,
    snapshotChars: config.memory.snapshot_chars,
    extract: 'off',
    embeddings: config.memory.embeddings && { baseUrl: config.memory.embeddings.base_url, model: config.memory.embeddings.model, apiKey: config.memory.embeddings.api_key },
  });
  const personId = flags.person ?? memory.people.personId('console', consoleUserId());
  try {
    const limit = limitOf(flags.limit);
    switch (verb) {
      case 'list': {
        const entries = memory.entries.list(personId, { limit });
        if (!entries.length) return void out.write(`Nothing remembered for ${personId}.\n`);
        for (const entry of entries) out.write(`${entryLine(entry).slice(2)}  (${entry.source}, ${new Date(entry.updatedAt).toISOString().slice(0, 10)})\n`);
        return;
      }
      case 'search': {
        if (!value) throw new UserFacingError('Usage: hob memory search "QUERY"');
        const found = await memory.search(personId, value, limit ?? 5);
        if (!found.length) return void out.write('Nothing matches.\n');
        for (const entry of found) out.write(`${entryLine(entry).slice(2)}\n`);
        return;
      }
      case 'export': {
        if (!value) throw new UserFacingError('Usage: hob memory export DIR');
        const entries = memory.entries.list(personId);
        const { exportMarkdown } = await markdown();
        exportMarkdown(value, personId, entries);
        return void out.write(`Wrote ${entries.length} entries for ${personId} to ${value} (MEMORY.md and entries/).\n`);
      }
      case 'import': {
        if (!value) throw new UserFacingError('Usage: hob memory import DIR');
        const { importMarkdown } = await markdown();
        let entries;
        try {
          entries = importMarkdown(value);
        } catch (error) {
          throw new UserFacingError(error instanceof Error ? error.message : String(error));
        }
        store.transaction(() => {
          for (const entry of entries) memory.entries.restore(personId, entry);
        });
        memory.afterImport();
        await memory.settled();
        return void out.write(`Imported ${entries.length} entries for ${personId}.\n`);
      }
      default:
        throw new UserFacingError(`Unknown verb "${verb}". Use hob memory list | search QUERY | export DIR | import DIR.`);
    }
  } finally {
    memory.close();
    store.close();
  }
}

/** `--limit N`: a whole number from 1; anything else is refused in words. */
function limitOf(given: string | undefined): number | undefined {
  if (given === undefined) return undefined;
  const limit = Number(given);
  if (!Number.isInteger(limit) || limit < 1) throw new UserFacingError(`--limit must be a whole number from 1, not "${given}" (e.g. --limit 20).`);
  return limit;
}
