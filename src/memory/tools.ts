import { z } from 'zod';
import { defineTool, type AnyTool } from '../tools/tool.js';
import type { Memory } from './memory.js';
import { PROFILE_FIELDS } from './profile.js';
import type { MemoryEntry } from '../store/memory/entry.js';

/**
 * The memory tools. Each acts only for the person who asked in this turn (their identity
 * from the tool context, resolved through linked identities); another person's id is
 * "not found". They touch hob's own store, never files or the shell, so they run without
 * an approval.
 */
export function memoryTools(memory: Memory): AnyTool[] {
  const person = (ctx: { sessionKey: string; userId: string }) => memory.personFor(ctx.sessionKey, ctx.userId);
  return [
    defineTool({
      name: 'memory_save',
      description:
        "Save a fact about the person for later sessions (their preferences, people, plans, servers, dates). One fact per entry, in plain words that include the key names. Saving something already known updates it. Returns the entry's id.",
      input: z.object({
        content: z.string().min(1).max(4000),
        title: z.string().max(200).optional(),
        tags: z.array(z.string().max(50)).max(20).optional(),
      }),
      readOnly: true,
      run: async (input, ctx) => {
        const { entry, updated } = memory.save(person(ctx), { ...input, source: 'tool' });
        return `${updated ? 'Updated' : 'Saved'} memory ${entry.id}.`;
      },
    }),
    defineTool({
      name: 'memory_search',
      description:
        "Search the person's long-term memory. Write the key words of what you look for, and add synonyms and translations of them (e.g. \"birthday anniversary compleanno Geburtstag\"): one matching word is enough. Returns the best entries with their ids, by relevance and recency.",
      input: z.object({ query: z.string().min(1).max(1000), limit: z.number().int().min(1).max(50).optional() }),
      readOnly: true,
      run: async (input, ctx) => {
        const found = await memory.search(person(ctx), input.query, input.limit ?? 5);
        if (found.length === 0) return 'Nothing in memory matches. Try other words, synonyms or a translation.';
        return found.map(describe).join('\n');
      },
    }),
    defineTool({
      name: 'memory_forget',
      description: "Delete one entry from the person's memory by its id (as memory_search shows it).",
      input: z.object({ id: z.string().min(1).max(64) }),
      readOnly: true,
      run: async (input, ctx) =>
        memory.forget(person(ctx), input.id) ? `Forgot ${input.id}.` : { content: `Memory ${input.id} was not found.`, isError: true },
    }),
    defineTool({
      name: 'profile_update',
      description:
        'Record a preference the person stated: name (how to address them), timezone (IANA, e.g. Europe/Rome), language (to answer in), style (e.g. "short answers, no emoji"), notes. An empty value clears the field.',
      input: z.object({ field: z.enum(PROFILE_FIELDS), value: z.string().max(500) }),
      readOnly: true,
      run: async (input, ctx) => {
        const stored = memory.profiles.set(person(ctx), input.field, input.value);
        return stored ? `Profile ${input.field} set to ${stored}.` : `Profile ${input.field} cleared.`;
      },
    }),
  ];
}

function describe(entry: MemoryEntry): string {
  const tags = entry.tags.length ? ` (tags: ${entry.tags.join(', ')})` : '';
  const day = new Date(entry.updatedAt).toISOString().slice(0, 10);
  return `[${entry.id}] ${entry.title ? `${entry.title}: ` : ''}${entry.content}${tags} — saved ${day}`;
}
