import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hobConfigSchemaFor } from '../../src/config/schema.js';
import type { WebSearchProvider } from '../../src/config/extensions-schema.js';
import { webSearchTool } from '../../src/tools/web-search.js';
import { FAKE_RESULTS, startFakeWebSearch, type FakeWebSearch } from '../fakes/web-search.js';
import { queryParams } from '../support/engine.js';
import { ScriptedModel } from '../fakes/scripted-model.js';

let fake: FakeWebSearch;
beforeAll(async () => {
  fake = await startFakeWebSearch();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.mode = 'results';
  fake.requests.length = 0;
});

function search(provider: WebSearchProvider, input: { query: string; limit?: number }) {
  const tool = webSearchTool({ provider, api_key: 'search-key', base_url: fake.baseUrl, timeout_seconds: 5, max_results: 8 });
  const context = { ...queryParams(new ScriptedModel(), []).context, progress: () => undefined };
  return tool.run(input, context);
}

const PROVIDERS: WebSearchProvider[] = ['brave', 'tavily', 'searxng', 'duckduckgo'];

describe.each(PROVIDERS)('web_search with %s', (provider) => {
  it('returns title, URL and snippet for each result', async () => {
    const output = await search(provider, { query: 'node 20' });
    expect(output).toBeTypeOf('string');
    expect(output).toContain('1. Node.js 20 release notes\n   https://nodejs.org/en/blog/release/v20.0.0\n   Node.js 20 comes with the permission model & a stable test runner.');
    expect(output).toContain(`2. ${FAKE_RESULTS[1]?.title}\n   ${FAKE_RESULTS[1]?.url}`);
  });

  it('honours the limit', async () => {
    const output = await search(provider, { query: 'node 20', limit: 1 });
    expect(output).toContain('1. Node.js 20 release notes');
    expect(output).not.toContain('2. ');
  });

  it('says so when there are no results', async () => {
    fake.mode = 'empty';
    expect(await search(provider, { query: 'zzqx' })).toMatch(/^No results for "zzqx"/);
  });

  it('turns a provider error into a result the model can read', async () => {
    fake.mode = 'error';
    const output = await search(provider, { query: 'node' });
    expect(output).toMatchObject({ isError: true, content: expect.stringMatching(/^The search failed: .* answered HTTP (429 \(rate limited\)|503)/) });
  });
});

describe('web_search requests', () => {
  it('sends each provider its key the way it expects', async () => {
    await search('brave', { query: 'a b' });
    await search('tavily', { query: 'a b' });
    await search('searxng', { query: 'a b' });
    await search('duckduckgo', { query: 'a b' });
    const [brave, tavily, searxng, ddg] = fake.requests;
    expect(brave?.headers['x-subscription-token']).toBe('search-key');
    expect(brave?.path).toBe('/res/v1/web/search?q=a+b&count=8');
    expect(tavily?.headers.authorization).toBe('Bearer search-key');
    expect(JSON.parse(tavily?.body ?? '{}')).toMatchObject({ query: 'a b', max_results: 8 });
    expect(searxng?.path).toBe('/search?q=a+b&format=json');
    expect(ddg).toMatchObject({ method: 'POST', path: '/html/', body: 'q=a+b' });
  });

  it('reports an unreachable provider without throwing', async () => {
    const tool = webSearchTool({ provider: 'searxng', base_url: 'http://127.0.0.1:9', timeout_seconds: 5, max_results: 8 });
    const output = await tool.run({ query: 'x' }, { ...queryParams(new ScriptedModel(), []).context, progress: () => undefined });
    expect(output).toMatchObject({ isError: true, content: expect.stringMatching(/SearXNG could not be reached/) });
  });

  it('defaults to DuckDuckGo and names the missing key or URL of the others in config errors', () => {
    expect(hobConfigSchemaFor([]).parse({}).tools.web_search.provider).toBe('duckduckgo');
    const brave = hobConfigSchemaFor([]).safeParse({ tools: { web_search: { provider: 'brave' } } });
    expect(brave.error?.issues[0]).toMatchObject({ path: ['tools', 'web_search', 'api_key'], message: expect.stringMatching(/brave provider needs one/) });
    const searx = hobConfigSchemaFor([]).safeParse({ tools: { web_search: { provider: 'searxng' } } });
    expect(searx.error?.issues[0]?.path).toEqual(['tools', 'web_search', 'base_url']);
  });
});
