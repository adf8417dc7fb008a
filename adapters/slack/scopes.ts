/** The bot token scopes hob uses; adapters/slack/manifest.yaml asks for exactly these. */
export const REQUIRED_SCOPES = [
  'app_mentions:read',
  'assistant:write',
  'channels:history',
  'chat:write',
  'commands',
  'files:read',
  'files:write',
  'groups:history',
  'im:history',
  'im:write',
  'mpim:history',
  'reactions:write',
  'users:read',
] as const;
