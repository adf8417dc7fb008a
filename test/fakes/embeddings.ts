/**
 * A fake OpenAI-compatible embeddings endpoint (POST /v1/embeddings), bound to 127.0.0.1:0,
 * that the real `openai` SDK talks to. Vectors are deterministic: words of one "meaning"
 * group share a dimension, every other word hashes to its own, so a question can be near an
 * entry it shares no word with — as with a real embedding model, but predictable.
 *
 * ```ts
 * const fake = await startFakeEmbeddings({ groups: [['gift', 'present', 'pens']] });
 * // memory.embeddings: { base_url: fake.baseUrl, model: 'fake-embed' }
 * fake.failNext(2); // the next two requests answer 500
 * ```
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeEmbeddings = {
  baseUrl: string;
  /** Every input text embedded, in order (requests that failed are not counted). */
  embedded: string[];
  requests: number;
  failNext(count: number): void;
  /** The vector the fake gives a text (what the server would answer). */
  vector(text: string): number[];
  close(): Promise<void>;
};

export async function startFakeEmbeddings(options: { dimensions?: number; groups?: string[][]; apiKey?: string } = {}): Promise<FakeEmbeddings> {
  const dimensions = options.dimensions ?? 64;
  const groups = options.groups ?? [];
  const groupOf = new Map<string, number>();
  groups.forEach((words, index) => words.forEach((word) => groupOf.set(word, index)));
  let failures = 0;

  const vector = (text: string): number[] => {
    const values = new Array<number>(dimensions).fill(0);
    for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      const word = raw.length > 3 ? raw.replace(/s$/, '') : raw;
      const group = groupOf.get(word) ?? groupOf.get(raw);
      if (group !== undefined) values[group % dimensions] = (values[group % dimensions] ?? 0) + 1;
      else values[groups.length + (hash(word) % (dimensions - groups.length))] = (values[groups.length + (hash(word) % (dimensions - groups.length))] ?? 0) + 0.3;
    }
    const norm = Math.hypot(...values) || 1;
    return values.map((value) => value / norm);
  };

  const fake: FakeEmbeddings = {
    baseUrl: '',
    embedded: [],
    requests: 0,
    failNext: (count) => void (failures = count),
    vector,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      fake.requests += 1;
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/embeddings') return send(404, { error: { message: `fake: no route ${req.url}` } });
      if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) return send(401, { error: { message: 'Incorrect API key provided' } });
      if (failures > 0) {
        failures -= 1;
        return send(500, { error: { message: 'fake: embeddings are down' } });
      }
      const body = JSON.parse(raw || '{}') as { input?: string | string[]; model?: string };
      const inputs = typeof body.input === 'string' ? [body.input] : (body.input ?? []);
      fake.embedded.push(...inputs);
      send(200, {
        object: 'list',
        model: body.model,
        data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: vector(text) })),
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}

function hash(word: string): number {
  let value = 2166136261;
  for (let i = 0; i < word.length; i++) value = Math.imul(value ^ word.charCodeAt(i), 16777619) >>> 0;
  return value;
}
