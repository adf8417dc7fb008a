import { run } from '@grammyjs/runner';
import { Bot } from 'grammy';
import type { StartPlatform } from './platform.js';

/** grammy with @grammyjs/runner: every text message answered with `ctx.reply`. */
export const start: StartPlatform = async (settings, answer) => {
  const bot = new Bot(settings.telegram.token, { client: { apiRoot: settings.telegram.apiRoot } });
  bot.on('message:text', async (ctx) => {
    await ctx.reply(await answer(`telegram:${ctx.chat.id}`, ctx.message.text));
  });
  const polling = run(bot);
  return () => polling.stop();
};
