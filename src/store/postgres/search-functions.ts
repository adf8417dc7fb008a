/**
 * The SQL functions PostgreSQL's full-text search is built on, created by the first
 * migration (migrations.ts) and used by the memory and session searches (memory-search.ts
 * asks `hob_word_query` for a question's words).
 */

/**
 * Words in every language hob drops stop words for (src/store/memory/query.ts): each text is
 * indexed unstemmed ('simple', for prefixes and names) and stemmed by each language's
 * snowball stemmer, so "plays" finds "playing" and "spiele" finds "spielen" without knowing
 * which language an entry is in. A question's word is looked up the same way.
 */
export const TEXT_SEARCH = `
  CREATE FUNCTION hob_text_vector(body text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('simple', body) || to_tsvector('english', body) || to_tsvector('german', body)
        || to_tsvector('italian', body) || to_tsvector('french', body) || to_tsvector('spanish', body)
  $$;
  -- A word's distinct forms ORed ('dormi' | 'dorm'), not one per language: the planner
  -- estimates a repeated form as several, and then scans the table instead of the index.
  CREATE FUNCTION hob_word_query(word text) RETURNS tsquery LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(string_agg(quote_literal(form), ' | ')::tsquery, ''::tsquery) FROM unnest(tsvector_to_array(hob_text_vector(word))) AS form
  $$;
  -- Title, tags and content weighted A, B, C: the ranking weighs them as SQLite's bm25 does (2, 1.5, 1).
  -- (array_to_string is only STABLE in general; for text[] it cannot change, so this is IMMUTABLE.)
  CREATE FUNCTION hob_memory_vector(title text, content text, tags text[]) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT setweight(hob_text_vector(coalesce(title, '')), 'A')
        || setweight(hob_text_vector(array_to_string(tags, ' ')), 'B')
        || setweight(hob_text_vector(content), 'C')
  $$;
`;
