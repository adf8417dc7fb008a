import { App, LogLevel } from '@slack/bolt';
import type { StartPlatform } from './platform.js';

/** Bolt over Socket Mode: every person's message answered with `say`. */
export const start: StartPlatform = async (settings, answer) => {
  const clientOptions = { slackApiUrl: settings.slack.apiUrl };
  const app = new App({
    token: settings.slack.botToken,
    appToken: settings.slack.appToken,
    socketMode: true,
    clientOptions,
    installerOptions: { clientOptions },
    logLevel: LogLevel.ERROR,
  });
  app.message(async ({ message, say }) => {
    if (message.subtype !== undefined || !('text' in message) || !message.text) return;
    await say(await answer(`slack:${message.channel}`, message.text));
  });
  await app.start();
  return async () => void (await app.stop());
};
