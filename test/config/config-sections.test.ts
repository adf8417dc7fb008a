import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseHobConfig } from '../../src/app/channels.js';
import { CHANNELS } from '../../adapters/index.js';
import { hobConfigSchemaFor } from '../../src/config/schema.js';
import { freshDir } from './config-files.js';

/**
 * The loader checks a config one written section at a time and fills an unwritten section's
 * defaults when it is first read (load.ts). What hob reads must be exactly what the whole
 * schema gives, however the config is copied. Absolute paths and written keys, so the
 * loader's own additions (paths, keys from the environment) change nothing here.
 */
function configs(dataDir: string): Record<string, string> {
  return {
    'the model only': `data_dir: ${dataDir}\nmodel: { api_key: sk-test, name: claude-haiku-4-5 }\n`,
    'chat channels and part of the gateway': `data_dir: ${dataDir}
model: { provider: openai, api_key: none, base_url: "http://localhost:8000/v1/" }
gateway: { busy_mode: queue }
channels:
  telegram: { token: "123456:ABC-def", allow_from: [42, "43"] }
  slack: { bot_token: xoxb-1, app_token: xapp-1 }
`,
    'hooks, MCP servers and web search': `data_dir: ${dataDir}
model: { api_key: sk-test }
hooks:
  pre_tool_use: [{ type: command, command: ./check.sh, matcher: bash }]
mcp:
  servers: { files: { command: npx, args: [files-server] }, web: { url: "https://mcp.example.com/x" } }
tools: { web_search: { provider: searxng, base_url: "http://localhost:8080/" } }
`,
    'sandbox short form, scheduler, voice and health': `data_dir: ${dataDir}
timezone: europe/berlin
model: { api_key: sk-test, retry: { max_attempts: 2 } }
permissions: { sandbox: off, path_rules: [{ pattern: "~/notes/**", allow: true }] }
scheduler: { grace_minutes: 3 }
health: { port: 8080 }
voice: { base_url: "http://localhost:8000/v1", model: whisper, api_key: k, tts: { model: kokoro, voice: af_bella, api_key: k2 } }
channels: { console: { enabled: true }, web: { allow_from: [ann] } }
`,
  };
}

describe('a config read section by section', () => {
  for (const [name, text] of Object.entries(configs('/srv/hob-data'))) {
    it(`reads as the whole schema gives it: ${name}`, () => {
      const whole = hobConfigSchemaFor(CHANNELS).parse(parse(text));
      const read = parseHobConfig(text, { env: { HOME: freshDir() } });
      expect(read).toEqual(whole);
      // Copies see every section with its defaults too: a spread, JSON, a structured clone.
      expect({ ...read }).toEqual(whole);
      expect(JSON.parse(JSON.stringify(read))).toEqual(JSON.parse(JSON.stringify(whole)));
      expect(structuredClone(read)).toEqual(whole);
    });
  }

  it('takes a section set by the program before it was first read', () => {
    const read = parseHobConfig('model: { api_key: sk-test }\n', { env: { HOME: freshDir() } });
    read.gateway = { ...hobConfigSchemaFor(CHANNELS).parse({}).gateway, max_queue: 3 };
    expect(read.gateway.max_queue).toBe(3);
    expect(read.gateway.busy_mode).toBe('steer');
  });
});
