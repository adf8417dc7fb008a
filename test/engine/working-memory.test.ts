import { describe, expect, it } from 'vitest';
import { frameSteered, QueryEngine } from '../../src/engine/query-engine.js';
import { framedText } from '../../src/gateway/framing.js';
import type { InboundMessage } from '../../src/gateway/channel.js';
import { WorkingMemory, WORKING_MEMORY_LIMITS } from '../../src/engine/working-memory.js';
import { messageText } from '../../src/core/messages.js';
import { z } from 'zod';
import { defineTool } from '../../src/tools/tool.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect } from '../support/engine.js';
import { engineDeps } from '../support/deps.js';

describe('working memory', () => {
  it('keeps bounded buckets, newest last, and survives a save and restore', () => {
    const memory = new WorkingMemory();
    for (let i = 0; i < 8; i += 1) memory.rememberGoal(`goal ${i}`);
    for (let i = 0; i < 15; i += 1) memory.recordTool('read_file', { path: `f${i}.md` }, { content: 'ok', isError: false });
    memory.recordTool('write_file', { path: 'out.md' }, { content: 'ok', isError: false });
    memory.recordTool('bash', { command: 'make test' }, { content: 'exit 2\nfailed', isError: true });
    const restored = WorkingMemory.fromJSON(memory.toJSON()).snapshot;
    expect(restored.taskFocus.goal).toBe('goal 7');
    expect(restored.taskFocus.recentGoals).toHaveLength(WORKING_MEMORY_LIMITS.recentGoals);
    expect(restored.recentFiles).toHaveLength(WORKING_MEMORY_LIMITS.recentFiles);
    expect(restored.recentFiles.at(-1)).toBe('out.md');
    expect(restored.workLog).toHaveLength(WORKING_MEMORY_LIMITS.workLog);
    expect(restored.workLog.at(-1)).toBe('bash make test → failed: exit 2');
    expect(restored.verifiedWork).toEqual(['write_file out.md']);
    expect(WorkingMemory.fromJSON('{broken').isEmpty).toBe(true);
  });

  it('is filled after tool calls, saved with the session and restored by a new engine', async () => {
    const read = defineTool({ name: 'read_file', description: 'r', input: z.object({ path: z.string() }), readOnly: true, run: async () => 'contents' });
    const deps = engineDeps(new ScriptedModel([{ toolCalls: [{ name: 'read_file', input: { path: 'plan.md' } }] }, { text: 'Read it.' }]), [read]);
    await collect(new QueryEngine('k', deps).submit('Read the plan', { userId: 'u', interaction: answering(), signal: new AbortController().signal }));
    const restored = new QueryEngine('k', deps).metadata.snapshot;
    expect(restored.taskFocus.goal).toBe('Read the plan');
    expect(restored.recentFiles).toEqual(['plan.md']);
    expect(restored.workLog).toEqual(['read_file plan.md → ok']);
  });
});

describe('messages framed so the model knows which is which', () => {
  const inbound = (extra: Partial<InboundMessage>): InboundMessage => ({
    platform: 'telegram', chatId: '1', userId: '1', userName: 'Ann', chatType: 'dm', text: 'at 10 please', attachments: [], mentionsBot: false, replyToBot: false, messageId: '5', ...extra,
  });

  it('an edit, a reply to an older message, and a plain message', () => {
    expect(framedText(inbound({}))).toBe('at 10 please');
    expect(framedText(inbound({ editedAfterSeconds: 30 }))).toBe('[Edited: this replaces what they wrote before; answer the corrected version] at 10 please');
    expect(framedText(inbound({ quoted: { text: 'Shall I book the dentist?', fromBot: true } }))).toBe('[Replying to your earlier message: "Shall I book the dentist?"] at 10 please');
  });

  it('text sent while a run is busy reaches the model marked as such', async () => {
    const echo = defineTool({ name: 'echo', description: 'e', input: z.object({}), readOnly: true, run: async () => 'ok' });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'echo', input: {} }] }, { text: 'done' }]);
    const engine = new QueryEngine('k', engineDeps(model, [echo]));
    for await (const event of engine.submit('start', { userId: 'u', interaction: answering(), signal: new AbortController().signal })) {
      if (event.type === 'tool_started') engine.steer('also check the logs');
    }
    expect(messageText(model.requests[1]?.messages.at(-1) ?? { role: 'user', content: [] })).toBe(frameSteered('also check the logs'));
  });
});
