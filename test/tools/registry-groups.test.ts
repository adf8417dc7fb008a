import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ToolRegistry, type AnyTool } from '../../src/tools/tool.js';

const tool = (name: string): AnyTool => defineTool({ name, description: name, input: z.object({}), readOnly: true, run: async () => name }) as unknown as AnyTool;

/** Extension tools come and go; the list the model sees stays in a stable order so the prompt cache holds. */
describe('ToolRegistry groups', () => {
  it('keeps built-ins first, then groups by name and tools by name, whatever order they arrive in', () => {
    const registry = new ToolRegistry([tool('bash'), tool('read_file')]);
    registry.replaceGroup('mcp:zeta', [tool('mcp__zeta__b'), tool('mcp__zeta__a')]);
    registry.replaceGroup('mcp:alpha', [tool('mcp__alpha__x')]);
    expect(registry.names()).toEqual(['bash', 'read_file', 'mcp__alpha__x', 'mcp__zeta__a', 'mcp__zeta__b']);
  });

  it('hands out the same specs until the list really changes', () => {
    const registry = new ToolRegistry([tool('bash')]);
    const same = [tool('mcp__s__a')];
    registry.replaceGroup('mcp:s', same);
    const specs = registry.specs();
    registry.replaceGroup('mcp:s', same);
    expect(registry.specs()).toBe(specs);
    registry.replaceGroup('mcp:s', [...same, tool('mcp__s__b')]);
    expect(registry.specs()).not.toBe(specs);
    expect(registry.names()).toEqual(['bash', 'mcp__s__a', 'mcp__s__b']);
    registry.replaceGroup('mcp:s', []);
    expect(registry.names()).toEqual(['bash']);
    expect(registry.get('mcp__s__a')).toBeUndefined();
  });

  it('leaves out a tool whose name is taken and says which', () => {
    const registry = new ToolRegistry([tool('bash')]);
    registry.replaceGroup('one', [tool('shared')]);
    expect(registry.replaceGroup('two', [tool('bash'), tool('shared'), tool('own')])).toEqual(['bash', 'shared']);
    expect(registry.names()).toEqual(['bash', 'shared', 'own']);
  });

  it('finds group tools by own name only', () => {
    const registry = new ToolRegistry([]);
    registry.replaceGroup('g', [tool('x')]);
    expect(registry.get('x')?.name).toBe('x');
    expect(registry.get('__proto__')).toBeUndefined();
    expect(registry.get('toString')).toBeUndefined();
  });
});
