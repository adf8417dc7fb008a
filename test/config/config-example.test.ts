import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadHobConfig } from '../../src/app/channels.js';
import { hobConfigSchemaFor } from '../../src/config/schema.js';
import { CHANNELS } from '../../adapters/index.js';
import { freshDir } from './config-files.js';
import type { TelegramConfig } from '../../adapters/telegram/index.js';
import type { SlackConfig } from '../../adapters/slack/index.js';
import type { DiscordConfig } from '../../adapters/discord/index.js';

const examplePath = fileURLToPath(new URL('../../config.example.yaml', import.meta.url));
const example = readFileSync(examplePath, 'utf8');

/** The example's optional settings, switched on: "# key: value" lines lose their "# ". */
function uncommented(text: string): string {
  return text.replace(/^(\s*)# (?=\s*(?:[a-z_]+:|- ))/gm, '$1');
}

/** Every key name the schema accepts, at any depth. */
function schemaKeys(schema: z.core.$ZodType, keys = new Set<string>()): Set<string> {
  if (
    schema instanceof z.ZodOptional ||
    schema instanceof z.ZodNullable ||
    schema instanceof z.ZodDefault ||
    schema instanceof z.ZodPrefault
  ) {
    return schemaKeys(schema.unwrap(), keys);
  }
  if (schema instanceof z.ZodPipe) return schemaKeys(schema.in, keys);
  if (schema instanceof z.ZodLazy) return schemaKeys(schema._zod.innerType, keys);
  if (schema instanceof z.ZodArray) return schemaKeys(schema.element, keys);
  if (schema instanceof z.ZodDiscriminatedUnion) {
    for (const option of schema.options) schemaKeys(option, keys);
  }
  if (schema instanceof z.ZodObject) {
    for (const [key, value] of Object.entries(schema.shape)) {
      keys.add(key);
      schemaKeys(value, keys);
    }
  }
  return keys;
}

describe('config.example.yaml', () => {
  it('loads cleanly and sets exactly the defaults', () => {
    const home = freshDir();
    const fromExample = loadHobConfig({ text: example, path: examplePath, env: { HOME: home } }).config;
    const defaults = loadHobConfig({ text: '', env: { HOME: home } }).config;
    expect(fromExample).toEqual(defaults);
  });

  it('still loads with every optional setting switched on', () => {
    const config = loadHobConfig({
      text: uncommented(example),
      path: examplePath,
      env: {
        HOME: freshDir(),
        TELEGRAM_BOT_TOKEN: '123456:ABC-def',
        HOB_DATABASE_URL: 'postgres://hob:secret@db.internal:5432/hob',
        TELEGRAM_WEBHOOK_SECRET: 'webhook-secret',
        SLACK_BOT_TOKEN: 'xoxb-1',
        SLACK_APP_TOKEN: 'xapp-1',
        SLACK_SIGNING_SECRET: 'signing',
        DISCORD_BOT_TOKEN: 'discord-token',
      },
    }).config;
    expect(config.hooks.pre_tool_use.map((hook) => hook.type)).toEqual(['command', 'http', 'prompt', 'agent']);
    expect((config.channels.telegram as TelegramConfig | undefined)?.webhook?.secret_token).toBe('webhook-secret');
    expect((config.channels.slack as SlackConfig | undefined)?.app_token).toBe('xapp-1');
    expect((config.channels.discord as DiscordConfig | undefined)?.allow_from).toEqual(['1234567890']);
    expect(config.channels.console.enabled).toBe(true);
  });

  it('documents every key the schema accepts', () => {
    const missing = [...schemaKeys(hobConfigSchemaFor(CHANNELS))].filter((key) => !new RegExp(`(^|[\\s{#-])${key}:`, 'm').test(example));
    expect(missing).toEqual([]);
  });
});
