import { z } from 'zod';
import { platformOf, type PersonResolver } from '../core/person.js';
import type { SessionArchive, SessionHit } from '../store/session-archive.js';
import { defineTool, type AnyTool } from '../tools/tool.js';

/**
 * `session_search { query, limit? }`: full-text search over the asking person's own past
 * messages, in every session (also ones compacted or left with /new). Nobody else's.
 */
export function sessionSearchTool(archive: SessionArchive, people: PersonResolver): AnyTool {
  const tool = defineTool({
    name: 'session_search',
    description:
      "Search the person's own past conversations with you (every session, including older parts that were summarized; in a group chat only this group's) by keywords. " +
      'Use it when they refer to something said before ("what did we decide about the router", "the address I gave you"). ' +
      'Put the key words in the query and add synonyms and translations of them; results show the session, date and the matching passage.',
    input: z.object({
      query: z.string().min(1, 'query must name what to look for'),
      limit: z.number().int().min(1).max(20).optional(),
    }),
    readOnly: true,
    run: async ({ query, limit }, ctx) => {
      const personId = people.personId(platformOf(ctx.sessionKey), ctx.userId);
      // In a group everyone reads the answer: only what was said in this conversation.
      const hits = archive.search(personId, query, limit ?? 5, ctx.inGroup ? ctx.sessionKey : undefined);
      if (hits.length === 0) return `Nothing in the past conversations matches "${query}". Try other words or synonyms.`;
      return hits.map(formatHit).join('\n');
    },
  });
  return tool as unknown as AnyTool;
}

function formatHit(hit: SessionHit, index: number): string {
  const date = new Date(hit.at).toISOString().slice(0, 10);
  return `${index + 1}. [${date}, "${hit.title}"] ${hit.role === 'user' ? 'the person' : 'you'}: ${hit.snippet.replace(/\s+/g, ' ')}`;
}
