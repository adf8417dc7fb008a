import { Client, Events, GatewayIntentBits, Partials } from 'discord.js';
import type { StartPlatform } from './platform.js';

/** discord.js: every person's message answered in its channel (DMs through the partial channel). */
export const start: StartPlatform = async (settings, answer) => {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages],
    partials: [Partials.Channel],
    rest: { api: settings.discord.apiUrl },
  });
  client.on(Events.MessageCreate, async (message) => {
    if (message.author.bot || !message.channel.isSendable()) return;
    await message.channel.send(await answer(`discord:${message.channelId}`, message.content));
  });
  await client.login(settings.discord.token);
  return () => client.destroy();
};
