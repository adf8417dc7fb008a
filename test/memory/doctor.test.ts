import '../support/env.js';
import { describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { startFakeEmbeddings } from '../fakes/embeddings.js';
import { tempDir } from '../support/engine.js';

describe('hob doctor and semantic search', () => {
  it('says memory search is full-text only when no embeddings endpoint is set', async () => {
    const config = parseHobConfig(`data_dir: ${tempDir('hob-doc-')}\n`, { env: {} });
    const check = (await runDoctor(config, undefined)).find((entry) => entry.name === 'semantic search');
    expect(check).toEqual({ name: 'semantic search', ok: true, detail: expect.stringContaining('not configured: memory search is full-text only') });
  });

  it('checks a configured endpoint with one request, and names the key to fix when it fails', async () => {
    const fake = await startFakeEmbeddings({ dimensions: 32, apiKey: 'emb' });
    try {
      const yaml = (key: string) => `data_dir: ${tempDir('hob-doc-')}\nmemory:\n  embeddings: { base_url: "${fake.baseUrl}", model: fake-embed, api_key: ${key} }\n`;
      const good = (await runDoctor(parseHobConfig(yaml('emb'), { env: {} }), undefined)).find((entry) => entry.name === 'semantic search');
      expect(good).toMatchObject({ ok: true, detail: expect.stringContaining('gives 32-dimension vectors') });
      const bad = (await runDoctor(parseHobConfig(yaml('nope'), { env: {} }), undefined)).find((entry) => entry.name === 'semantic search');
      expect(bad).toMatchObject({ ok: false, detail: expect.stringContaining('check memory.embeddings') });
    } finally {
      await fake.close();
    }
  });
});
