/** The six moments a hook can run at; config, the hook runner and the engine share this list. */
export const HOOK_EVENTS = [
  'session_start',
  'session_end',
  'pre_compact',
  'post_compact',
  'pre_tool_use',
  'post_tool_use',
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];
