/**
 * Config for work hob hands off: workers the model starts with the agent tool (`agents:`)
 * and background tasks (`tasks:`). Kept apart from schema.ts so that file only names the
 * sections.
 */
import { z } from 'zod';
import { nonEmptyString, positiveInt, stringList } from './schema-parts.js';

export const agentsSchema = z.lazy(() =>
  z
    .strictObject({
      /** Workers one person may have running at once; further agent calls wait for a slot. */
      max_parallel: positiveInt.default(4),
      /** A worker's turn limit (an agent definition's max_turns overrides it). */
      max_turns: positiveInt.default(20),
      /** A worker's time limit. */
      timeout_seconds: positiveInt.default(300),
      /** The model workers use unless a definition or the call names another; default: the conversation's. */
      model: nonEmptyString.optional(),
      /** Other models an agent call may ask for (a definition's own model is always allowed). */
      models: stringList,
    })
    .prefault({}),
);

export const tasksSchema = z.lazy(() =>
  z
    .strictObject({
      /** Background tasks one person may have queued or running at once. */
      max_running: positiveInt.default(3),
      /** One task's time limit, across restarts. */
      timeout_seconds: positiveInt.default(1800),
      /** Tokens (in + out) one task may spend before it is stopped. */
      max_tokens: positiveInt.default(500_000),
    })
    .prefault({}),
);
