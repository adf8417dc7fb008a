/**
 * One line of `hob doctor`. Every part that checks something (the model, the sandbox, voice, a
 * channel module's tokens) returns these, so the CLI prints them all alike.
 */
export type Check = {
  /** What was checked, short and lower case ("model endpoint", "web address"). */
  name: string;
  ok: boolean;
  /** What was found, and when it is not ok, what to change (a config key, a setting). */
  detail: string;
  /** Printed with "!" and does not fail the run (only meaningful with `ok: true`). */
  warn?: boolean;
};
