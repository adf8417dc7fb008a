import { GatewayCloseCodes } from 'discord.js';
import { errorMessage } from '../../src/core/errors.js';

/** Close codes after which Discord will never accept this bot as configured (discord.js gives up too). */
const FATAL_CLOSE_CODES: ReadonlySet<number> = new Set([
  GatewayCloseCodes.AuthenticationFailed,
  GatewayCloseCodes.InvalidShard,
  GatewayCloseCodes.ShardingRequired,
  GatewayCloseCodes.InvalidAPIVersion,
  GatewayCloseCodes.InvalidIntents,
  GatewayCloseCodes.DisallowedIntents,
]);

const STOPPED = 'The Discord channel is stopped; the other channels keep running.';

export function isFatalCloseCode(code: number): boolean {
  return FATAL_CLOSE_CODES.has(code);
}

/** One sentence naming the problem and the fix, for a close code or a failed login. */
export function fatalSentence(cause: { code: number } | { error: unknown }): string {
  const code = 'code' in cause ? cause.code : undefined;
  const message = 'error' in cause ? errorMessage(cause.error) : '';
  if (code === GatewayCloseCodes.DisallowedIntents || /disallowed intents/i.test(message)) {
    return `Discord refused the connection (4014 disallowed intents): enable Message Content Intent in the Developer Portal (your application → Bot → Privileged Gateway Intents), then restart hob. ${STOPPED}`;
  }
  if (code === GatewayCloseCodes.AuthenticationFailed || /token|401|unauthorized|authentication/i.test(message)) {
    return `Discord refused the bot token${code ? ` (${code} authentication failed)` : ''}: copy a new one from the Developer Portal (your application → Bot → Reset Token) into channels.discord.token, then restart hob. ${STOPPED}`;
  }
  if (code !== undefined) {
    return `Discord closed the connection with code ${code} (${GatewayCloseCodes[code] ?? 'unknown'}) and will not take it back; check channels.discord in the config, then restart hob. ${STOPPED}`;
  }
  return `Discord could not be reached (${message}); check channels.discord.api_url and the network, then restart hob. ${STOPPED}`;
}
