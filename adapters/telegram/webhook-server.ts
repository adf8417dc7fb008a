import http from 'node:http';
import { webhookCallback, type Bot } from 'grammy';
import type { TelegramLogger } from './logger.js';
import { describeError } from './outbound.js';

export type WebhookListenOptions = { host: string; port: number; secretToken: string };

/**
 * A plain node:http server that hands Telegram's POSTs to grammy. grammy answers a request
 * without the right X-Telegram-Bot-Api-Secret-Token with 401 before reading its body. Any
 * path is accepted: a reverse proxy may rewrite the public URL's path, and the secret token
 * is what proves the sender. The handler only enqueues, so Telegram gets its 200 at once.
 */
export async function startWebhookServer(bot: Bot, options: WebhookListenOptions, logger: TelegramLogger): Promise<http.Server> {
  const handleUpdate = webhookCallback(bot, 'http', { secretToken: options.secretToken });
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    handleUpdate(req, res).catch((error: unknown) => {
      logger.error({ ...describeError(error) }, 'telegram webhook request failed');
      // Unparseable JSON is the sender's fault; anything else is ours (Telegram will retry).
      if (!res.headersSent) res.writeHead(error instanceof SyntaxError ? 400 : 500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

export async function closeServer(server: http.Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
