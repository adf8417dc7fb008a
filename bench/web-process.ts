/**
 * `hob start` with the web channel, for bench/web.ts's memory figure, until the channel
 * registry wires the web into `hob start` itself: the same app, Telegram adapter and gateway
 * as `hob start`, plus (with `web PORT`) the web adapter. bench/web.ts bundles this file like
 * dist/ is bundled and runs it with plain node, so its memory compares with `hob start`'s.
 *
 * Usage: node web-process.js CONFIG telegram | web PORT — prints "running" once the channels
 * are up; SIGTERM stops it.
 */
import { createTelegramAdapter } from '../adapters/telegram/telegram-adapter.js';
import { webChannel } from '../adapters/web/index.js';
import { createApp } from '../src/app.js';
import { createGateway } from '../src/cli/start.js';
import { loadConfig } from '../src/config/load.js';
import type { ChannelAdapter } from '../src/gateway/channel.js';

const [configPath, mode, webPort] = process.argv.slice(2);
const { config, path } = loadConfig({ path: configPath });
const app = await createApp({ config, configPath: path, channel: 'a chat', deferModelLoad: true });
const telegram = config.channels.telegram;
if (!telegram) throw new Error('the config needs channels.telegram');
const adapters: ChannelAdapter[] = [createTelegramAdapter({ token: telegram.token, apiRoot: telegram.api_root, logger: app.logger.child({ platform: 'telegram' }) })];
if (mode === 'web') {
  const web = webChannel.configSchema.parse({ port: Number(webPort), allow_from: ['100'] });
  adapters.push(await webChannel.create(web, { logger: app.logger.child({ platform: 'web' }), dataDir: config.data_dir }));
}
const gateway = createGateway(app, adapters);
await gateway.start();
app.warmUp();
process.stdout.write('running\n');
process.once('SIGTERM', () => {
  void gateway
    .stop()
    .then(() => app.close())
    .finally(() => process.exit(0));
});
