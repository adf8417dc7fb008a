import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp, type App } from '../../src/app.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { plainJsonSchema, toolJsonSchema, zodJsonSchema } from '../../src/tools/json-schema.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { tempDir } from '../support/engine.js';

/**
 * The model reads each tool's input as JSON Schema. hob writes the plain kinds its tools use in
 * one walk (src/tools/json-schema.ts) and leaves the rest to zod: what the model reads is the
 * same either way, for every tool hob has and for the checks those kinds can carry.
 */
let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe("a tool's JSON Schema", () => {
  it('is, for every built-in tool, written in one walk and the same as zod writes it', async () => {
    const dir = tempDir('hob-json-schema-');
    app = await createApp({ config: parseHobConfig(`data_dir: ${dir}\n`, { env: {} }), channel: 'a test', provider: new ScriptedModel([]), logDestination: 'silent' });
    const tools = app.deps.tools.list().filter((tool) => !tool.inputJsonSchema);
    expect(tools.length).toBeGreaterThan(20);
    for (const tool of tools) {
      const plain = plainJsonSchema(tool.input as z.ZodType);
      expect(plain, tool.name).toBeDefined();
      expect(plain, tool.name).toEqual(zodJsonSchema(tool.input as z.ZodType));
    }
  });

  it('carries the checks of numbers, strings and arrays as zod does', () => {
    const cases: z.ZodType[] = [
      z.number().min(1).gt(1),
      z.number().gt(1).min(2),
      z.number().positive().lte(0.5).lt(0.5),
      z.int(),
      z.int().min(-3).max(5),
      z.number().max(10).int(),
      z.string().min(2).max(9).min(3).trim(),
      z.string().regex(/^[a-z]+$/),
      z.array(z.boolean()).min(1).max(3),
      z.enum(['a', 'b']),
      z.unknown(),
      z.strictObject({ when: z.string().describe('a time').optional(), tags: z.array(z.string()).default([]).describe('labels'), n: z.number().describe('first').describe('second') }),
      z.object({ nested: z.object({ deep: z.enum(['x']).optional() }).describe('inside') }).describe('outside'),
    ];
    for (const schema of cases) {
      const plain = plainJsonSchema(schema);
      expect(plain, JSON.stringify(zodJsonSchema(schema))).toBeDefined();
      expect(plain).toEqual(zodJsonSchema(schema));
    }
  });

  it('leaves to zod what it does not write, and says the same then', () => {
    type Node = { name: string; children: Node[] };
    const tree: z.ZodType<Node> = z.object({ name: z.string(), get children() { return z.array(tree); } });
    const cases: z.ZodType[] = [
      z.union([z.string(), z.number()]),
      z.string().email(),
      z.string().regex(/a/).regex(/b/),
      z.object({ a: z.string() }).meta({ title: 'A' }),
      z.object({ a: z.string() }).catchall(z.number()),
      z.int32(),
      z.string().transform((text) => text.length),
      tree,
    ];
    for (const schema of cases) {
      expect(plainJsonSchema(schema)).toBeUndefined();
      expect(toolJsonSchema(schema)).toEqual(zodJsonSchema(schema));
    }
  });
});
