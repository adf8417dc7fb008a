import { createApp } from '../app.js';
import { loadConfig } from '../config/load.js';
import { runChat } from './chat.js';
import { consoleSessionKey, consoleUserId } from './console-identity.js';

/** `hob start`: every configured channel; with no chat channel configured, the terminal. */
export async function runStart(configPath: string | undefined): Promise<void> {
  const { config, path } = loadConfig({ path: configPath });
  const app = await createApp({ config, configPath: path, channel: 'a terminal' });
  try {
    await runChat({
      engine: app.engine(consoleSessionKey()),
      userId: consoleUserId(),
      logger: app.logger,
      approvalTimeoutSeconds: config.permissions.approval_timeout_seconds,
    });
  } finally {
    app.close();
  }
}
