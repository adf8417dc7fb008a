/**
 * The floor hob is measured against (bench/vs-floor.ts): a bare echo bot on the same
 * libraries hob uses, serving Telegram (grammy + @grammyjs/runner), Slack (Bolt, Socket Mode)
 * and Discord (discord.js) at once, asking the model (the Anthropic SDK, streamed) with each
 * chat's whole history, kept in one JSON file rewritten after every answer. No access
 * checks, no tools, no outbox: what any bot on these libraries costs at the least.
 *
 * Not part of hob: the benchmark bundles it like hob's dist/ and runs it as
 * `node index.mjs settings.json`; it prints "floor is running" once all three are up.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import Anthropic from '@anthropic-ai/sdk';
import type { Answer, FloorSettings, Stop } from './platform.js';

export type { FloorSettings } from './platform.js';

type Turn = { role: 'user' | 'assistant'; content: string };

const settingsPath = process.argv[2];
if (!settingsPath) throw new Error('usage: floor-bot settings.json');
const settings = JSON.parse(readFileSync(settingsPath, 'utf8')) as FloorSettings;

const model = new Anthropic({ apiKey: settings.model.apiKey, baseURL: settings.model.baseUrl, maxRetries: 0 });
const history: Record<string, Turn[]> = {};
let saving: Promise<void> = Promise.resolve();

const answer: Answer = async (chat, text) => {
  const turns = (history[chat] ??= []);
  turns.push({ role: 'user', content: text });
  const reply = await model.messages.stream({ model: settings.model.name, max_tokens: 1024, messages: turns }).finalText();
  turns.push({ role: 'assistant', content: reply });
  // One write at a time, each the whole file.
  saving = saving.then(() => writeFile(settings.historyFile, JSON.stringify(history))).catch(() => undefined);
  return reply;
};

// Each platform in its own module, loaded in its own chunk as in hob's dist/ (one bundle
// scope would rename the abort-controller shim's AbortSignal class, which grammy's fetch
// then refuses).
const platforms = [import('./telegram.js'), import('./slack.js'), import('./discord.js')];
const stops: Stop[] = await Promise.all(platforms.map(async (platform) => (await platform).start(settings, answer)));
process.stderr.write('floor is running\n');

process.once('SIGTERM', () => {
  void (async () => {
    for (const stop of stops) await stop();
    await saving;
    process.exit(0);
  })();
});
