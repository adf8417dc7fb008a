import { WebClient } from '@slack/web-api';
import type { Check } from '../../src/core/check.js';
import { errorMessage } from '../../src/core/errors.js';
import { slackErrorCode } from './outbound.js';
import { REQUIRED_SCOPES } from './scopes.js';

/**
 * `hob doctor` for Slack: the bot token works and carries every scope hob uses (auth.test and
 * the scopes Slack reports with it), and the app token can open a Socket Mode connection
 * (apps.connections.open; the socket itself is not opened). Never prints a token.
 */
export async function checkSlack(options: { botToken: string; appToken?: string; apiUrl: string }): Promise<Check[]> {
  const clientOptions = { slackApiUrl: options.apiUrl, retryConfig: { retries: 0 }, timeout: 10_000 };
  const checks: Check[] = [];
  try {
    const auth = await new WebClient(options.botToken, clientOptions).auth.test();
    const granted = new Set(auth.response_metadata?.scopes ?? []);
    const missing = REQUIRED_SCOPES.filter((scope) => !granted.has(scope));
    checks.push(
      missing.length === 0
        ? { name: 'slack bot token', ok: true, detail: `works as @${auth.user ?? '?'} in ${auth.team ?? 'the workspace'}, with every scope hob uses` }
        : { name: 'slack bot token', ok: false, detail: `works as @${auth.user ?? '?'}, but lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}; add ${missing.length > 1 ? 'them' : 'it'} under OAuth & Permissions (or recreate the app from adapters/slack/manifest.yaml) and reinstall the app` },
    );
  } catch (error) {
    checks.push({ name: 'slack bot token', ok: false, detail: `auth.test failed: ${explain(error)}; check channels.slack.bot_token (the "xoxb-" Bot User OAuth Token) and channels.slack.api_url` });
  }
  if (options.appToken !== undefined) {
    try {
      await new WebClient(options.appToken, clientOptions).apps.connections.open();
      checks.push({ name: 'slack app token', ok: true, detail: 'Socket Mode connections can be opened' });
    } catch (error) {
      checks.push({ name: 'slack app token', ok: false, detail: `apps.connections.open failed: ${explain(error)}; check channels.slack.app_token (an app-level "xapp-" token with connections:write) and that Socket Mode is on` });
    }
  }
  return checks;
}

function explain(error: unknown): string {
  return slackErrorCode(error) ?? errorMessage(error);
}
