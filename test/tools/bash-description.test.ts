import { describe, expect, it } from 'vitest';
import type { Sandbox, SandboxStatus } from '../../src/policy/sandbox.js';
import { bashTool } from '../../src/tools/bash.js';
import { ToolRegistry } from '../../src/tools/tool.js';

/** A sandbox that counts how often its state was asked (learning it runs bwrap). */
function countingSandbox(status: SandboxStatus): Sandbox & { asked: number } {
  const sandbox = {
    asked: 0,
    status: () => {
      sandbox.asked += 1;
      return status;
    },
    prepare: async () => status,
    describe: () => status.state,
    wrap: async (argv: string[]) => ({ file: argv[0] ?? '/bin/bash', args: argv.slice(1), sandboxed: status.state === 'active' }),
  };
  return sandbox;
}

describe('the bash tool description', () => {
  it('tells the model whether commands run in the sandbox, learning it only when the description is first read', () => {
    const active = countingSandbox({ state: 'active', bwrap: '/usr/bin/bwrap' });
    const tool = bashTool({ sandbox: active });
    expect(active.asked).toBe(0);
    const [spec] = new ToolRegistry([tool]).specs();
    expect(spec?.description).toContain('Commands run in a sandbox');
    expect(active.asked).toBeGreaterThan(0);

    const [plain] = new ToolRegistry([bashTool({ sandbox: countingSandbox({ state: 'unavailable', reason: 'no bwrap' }) })]).specs();
    expect(plain?.description).toContain('Background processes are stopped when the command exits');
    expect(plain?.description).not.toContain('sandbox');
  });
});
