
export type EmbeddingsSettings = { baseUrl: string; model: string; apiKey?: string };

/** Turns texts into vectors. Throws on failure (the caller retries later or searches full-text only). */
export type Embedder = (texts: string[], signal?: AbortSignal) => Promise<Float32Array[]>;

/**
 * Any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM), through the
 * openai SDK (loaded on first use). Floats are asked for explicitly: servers other than
 * OpenAI rarely speak the SDK's default base64.
 */
export function embeddingsClient(settings: EmbeddingsSettings): Embedder {
  let client: Promise<import('openai').OpenAI> | undefined;
  const load = () =>
    (client ??= import('openai').then(({ OpenAI }) => new OpenAI({ apiKey: settings.apiKey || 'none', baseURL: settings.baseUrl, maxRetries: 1, timeout: 20_000 })));
  return async (texts, signal) => {
    const openai = await load();
    const response = await openai.embeddings.create({ model: settings.model, input: texts, encoding_format: 'float' }, { signal });
    const vectors = [...response.data].sort((a, b) => a.index - b.index).map((item) => Float32Array.from(item.embedding));
    if (vectors.length !== texts.length) throw new Error(`the embeddings endpoint returned ${vectors.length} vectors for ${texts.length} texts`);
    return vectors;
  };
}

/** Reciprocal rank fusion of ranked lists of ids: each list adds 1/(k + rank). */
export function reciprocalRankFusion(lists: number[][], k = 60): number[] {
  const scores = new Map<number, number>();
  for (const list of lists) list.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + rank + 1)));
  return [...scores.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id);
}
