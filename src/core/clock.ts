/** Injected time source, so schedules, expiries and prompts can be tested. */
export type Clock = { now(): number };

export const systemClock: Clock = { now: () => Date.now() };
