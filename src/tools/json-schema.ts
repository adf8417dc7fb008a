/**
 * A tool's input as the JSON Schema the model reads. zod's own `toJSONSchema` walks a schema
 * three times through general machinery (references, cycles, definitions) and took ~10 ms of
 * the first answer after a start for hob's 26 tools, run cold. The schemas of hob's tools use a
 * few kinds (objects of strings, numbers, booleans, enums and arrays, optional or with a
 * default, described), and those are written here in one walk, as zod writes them: the same
 * keys and values (tests compare every built-in tool with zod). Anything else — another kind, a
 * check or format not listed, metadata besides a description, a schema's own JSON override —
 * goes to zod whole.
 */
import { z } from 'zod';

type Json = Record<string, unknown>;
/** zod's internals as far as they are read here. */
type Internals = {
  def: { type: string; checks?: { _zod: { def: CheckDef } }[]; shape?: Record<string, z.ZodType>; catchall?: z.ZodType; element?: z.ZodType; innerType?: z.ZodType; entries?: Record<string, unknown>; defaultValue?: unknown };
  bag: { minimum?: number; maximum?: number; exclusiveMinimum?: number; exclusiveMaximum?: number; format?: string; patterns?: Set<RegExp> };
  optin?: string;
  toJSONSchema?: unknown;
  /** `$ZodCheck` among them: the schema is a check of its own (`z.int()`, `z.email()`), its def the first check. */
  traits: Set<string>;
};
type CheckDef = { check: string; value?: number; inclusive?: boolean; minimum?: number; maximum?: number; format?: string; pattern?: RegExp };

/** Thrown inside the walk for what it does not write: zod writes the whole schema then. */
class NotPlain extends Error {}

export function toolJsonSchema(schema: z.ZodType): Json {
  return plainJsonSchema(schema) ?? zodJsonSchema(schema);
}

/** The schema written in one walk, or undefined when it holds what only zod writes. */
export function plainJsonSchema(schema: z.ZodType): Json | undefined {
  try {
    return plain(schema);
  } catch (error) {
    if (error instanceof NotPlain) return undefined;
    throw error;
  }
}

/** zod's own, as the model reads it: the input side, without the `$schema` line. */
export function zodJsonSchema(schema: z.ZodType): Json {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  delete json.$schema;
  return json;
}

/** `within`: the schemas this one is inside of (a schema inside itself is zod's to write, with a reference). */
function plain(schema: z.ZodType, within: ReadonlySet<z.ZodType> = new Set()): Json {
  const zod = (schema as unknown as { _zod: Internals })._zod;
  if (zod.toJSONSchema || within.has(schema)) throw new NotPlain();
  let path: Set<z.ZodType> | undefined;
  const inner = (child: z.ZodType | undefined) => plain(child as z.ZodType, (path ??= new Set(within).add(schema)));
  const { def } = zod;
  let json: Json;
  switch (def.type) {
    case 'object': {
      const shape = def.shape ?? {};
      if (Object.getOwnPropertySymbols(shape).length) throw new NotPlain();
      json = { type: 'object', properties: Object.fromEntries(Object.entries(shape).map(([key, field]) => [key, inner(field)])) };
      // zod's `optin`: a key that may be absent (optional, default).
      const required = Object.entries(shape).filter(([, field]) => (field as unknown as { _zod: Internals })._zod.optin === undefined).map(([key]) => key);
      if (required.length) json.required = required;
      if (def.catchall) {
        if ((def.catchall as unknown as { _zod: Internals })._zod.def.type !== 'never') throw new NotPlain();
        json.additionalProperties = false;
      }
      break;
    }
    case 'string': {
      const agg = checks(zod);
      json = { type: 'string' };
      if (agg.minimum !== undefined) json.minLength = agg.minimum;
      if (agg.maximum !== undefined) json.maxLength = agg.maximum;
      if (agg.patterns.length > 1 || (agg.format !== undefined && agg.format !== 'regex')) throw new NotPlain();
      if (agg.patterns[0]) json.pattern = agg.patterns[0].source;
      break;
    }
    case 'number': {
      const agg = checks(zod);
      json = { type: agg.isInt ? 'integer' : 'number' };
      if (agg.exclusiveMinimum !== undefined && agg.exclusiveMinimum >= (agg.minimum ?? -Infinity)) json.exclusiveMinimum = agg.exclusiveMinimum;
      else if (agg.minimum !== undefined) json.minimum = agg.minimum;
      if (agg.exclusiveMaximum !== undefined && agg.exclusiveMaximum <= (agg.maximum ?? Infinity)) json.exclusiveMaximum = agg.exclusiveMaximum;
      else if (agg.maximum !== undefined) json.maximum = agg.maximum;
      break;
    }
    case 'boolean':
      json = { type: 'boolean' };
      break;
    case 'enum': {
      const values = Object.values(def.entries ?? {});
      if (values.length === 0 || !values.every((value) => typeof value === 'string')) throw new NotPlain();
      json = { type: 'string', enum: values };
      break;
    }
    case 'array': {
      const agg = checks(zod);
      json = {};
      if (agg.minimum !== undefined) json.minItems = agg.minimum;
      if (agg.maximum !== undefined) json.maxItems = agg.maximum;
      json.type = 'array';
      json.items = inner(def.element);
      break;
    }
    case 'optional':
      json = inner(def.innerType);
      break;
    case 'default': {
      const value = JSON.stringify(def.defaultValue);
      if (value === undefined) throw new NotPlain();
      json = { default: JSON.parse(value) as unknown, ...inner(def.innerType) };
      break;
    }
    case 'unknown':
      json = {};
      break;
    default:
      throw new NotPlain();
  }
  const meta = z.globalRegistry.get(schema);
  if (meta) {
    if (Object.keys(meta).some((key) => key !== 'description')) throw new NotPlain();
    if (meta.description !== undefined) json.description = meta.description;
  }
  return json;
}

/** zod's fold of a schema's checks (its `aggregateChecks`), for the checks listed; any other is not plain. */
function checks(zod: Internals): { minimum?: number; maximum?: number; exclusiveMinimum?: number; exclusiveMaximum?: number; format?: string; isInt?: boolean; patterns: RegExp[] } {
  const agg: ReturnType<typeof checks> = { patterns: [] };
  const min = (key: 'minimum' | 'exclusiveMinimum', value: number | undefined) => {
    if (value !== undefined && (agg[key] === undefined || value > (agg[key] as number))) agg[key] = value;
  };
  const max = (key: 'maximum' | 'exclusiveMaximum', value: number | undefined) => {
    if (value !== undefined && (agg[key] === undefined || value < (agg[key] as number))) agg[key] = value;
  };
  const format = (name: string) => {
    agg.format = name;
    if (name.includes('int')) agg.isInt = true;
  };
  const own = zod.traits.has('$ZodCheck') ? [zod.def as unknown as CheckDef] : [];
  for (const def of [...own, ...(zod.def.checks ?? []).map((check) => check._zod.def)]) {
    switch (def.check) {
      case 'greater_than':
        min(def.inclusive ? 'minimum' : 'exclusiveMinimum', def.value);
        break;
      case 'less_than':
        max(def.inclusive ? 'maximum' : 'exclusiveMaximum', def.value);
        break;
      case 'min_length':
        min('minimum', def.minimum);
        break;
      case 'max_length':
        max('maximum', def.maximum);
        break;
      case 'number_format':
        if (def.format !== 'safeint') throw new NotPlain();
        format(def.format);
        min('minimum', Number.MIN_SAFE_INTEGER);
        max('maximum', Number.MAX_SAFE_INTEGER);
        break;
      case 'string_format':
        if (def.format !== 'regex' || !def.pattern) throw new NotPlain();
        format(def.format);
        if (!agg.patterns.includes(def.pattern)) agg.patterns.push(def.pattern);
        break;
      case 'overwrite': // .trim() and the like change the value, not what is accepted
        break;
      default:
        throw new NotPlain();
    }
  }
  // As zod does: what a check put in the schema's bag besides.
  const { bag } = zod;
  min('minimum', bag.minimum);
  min('exclusiveMinimum', bag.exclusiveMinimum);
  max('maximum', bag.maximum);
  max('exclusiveMaximum', bag.exclusiveMaximum);
  if (bag.format !== undefined) {
    agg.format ??= bag.format;
    if (bag.format.includes('int')) agg.isInt = true;
  }
  for (const pattern of bag.patterns ?? []) if (!agg.patterns.includes(pattern)) agg.patterns.push(pattern);
  return agg;
}
