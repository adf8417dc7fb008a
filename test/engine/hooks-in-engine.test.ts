import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueryEngine } from '../../src/engine/query-engine.js';
import { createHookRunner, type CommandHook } from '../../src/policy/hooks.js';
import { bashTool } from '../../src/tools/bash.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect, ofType } from '../support/engine.js';
import { engineDeps } from '../support/deps.js';

/** Hooks as configured in config.yaml, fired by the engine at the moments they name. */

const hook = (command: string, extra: Partial<CommandHook> = {}): CommandHook => ({ type: 'command', command, timeout_seconds: 10, block_on_failure: false, ...extra });
const options = () => ({ userId: 'ann', interaction: answering(), signal: new AbortController().signal });

describe('hooks in a conversation', () => {
  it('session_start runs once when a session begins, session_end when /new resets it', async () => {
    const model = new ScriptedModel([{ text: 'one' }, { text: 'two' }, { text: 'three' }]);
    const deps = engineDeps(model);
    const log = join(deps.dir, 'sessions.log');
    deps.hooks = createHookRunner(
      {
        session_start: [hook(`echo "start $HOB_HOOK_EVENT" >> ${log}`)],
        session_end: [hook(`echo "end $HOB_HOOK_EVENT" >> ${log}`)],
      },
      { cwd: deps.dir },
    );
    const engine = new QueryEngine('console:local', deps);
    await collect(engine.submit('hello', options()));
    await collect(engine.submit('again', options()));
    engine.reset();
    await collect(engine.submit('fresh start', options()));
    await new Promise((resolve) => setTimeout(resolve, 300)); // session_end is not awaited by reset()
    expect(readFileSync(log, 'utf8').trim().split('\n').sort()).toEqual(['end session_end', 'start session_start', 'start session_start']);
  });

  it('a blocking pre_tool_use hook stops a shell command, and the model hears why', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'touch deployed' } }] }, { text: 'The hook stopped me.' }]);
    const deps = engineDeps(model, [bashTool({ defaultTimeoutSeconds: 10 })]);
    deps.hooks = createHookRunner({ pre_tool_use: [hook('echo "no deploys on friday" >&2; exit 1', { block_on_failure: true, matcher: 'bash' })] }, { cwd: deps.dir });
    const events = await collect(new QueryEngine('console:local', deps).submit('deploy', options()));
    const result = JSON.stringify(model.requests[1]?.messages.at(-1));
    expect(result).toContain('blocked by a pre_tool_use hook');
    expect(result).toContain('no deploys on friday');
    expect(ofType(events, 'tool_finished')).toHaveLength(0);
    expect(() => readFileSync(join(deps.dir, 'deployed'))).toThrow();
  });
});
