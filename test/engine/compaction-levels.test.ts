import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/core/messages.js';
import { invariantProblems, newestPersonMessage } from '../../src/engine/compaction/invariants.js';
import { chooseCut, clearOldToolResults, collapseLongTexts, outline, summaryText, withSummary } from '../../src/engine/compaction/levels.js';
import { ThinkingMemory, toParams } from '../../src/providers/anthropic-wire.js';
import { toChatMessages } from '../../src/providers/openai.js';

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const said = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });
const calls = (id: string, name: string, input: unknown): Message => ({ role: 'assistant', content: [{ type: 'tool_use', id, name, input }] });
const result = (id: string, content: string, isError = false): Message => ({ role: 'user', content: [{ type: 'tool_result', toolUseId: id, content, isError }] });

/** Ten rounds: the person asks, hob reads a big file, answers; the newest request is a tool loop in progress. */
function craftedHistory(): Message[] {
  const history: Message[] = [];
  for (let round = 0; round < 10; round += 1) {
    history.push(user(`Round ${round}: please check config ${round}. ${'detail '.repeat(round === 2 ? 400 : 5)}`));
    history.push(calls(`t${round}`, 'read_file', { path: `conf/${round}.yaml` }));
    history.push(result(`t${round}`, `key: value\n`.repeat(300)));
    history.push(said(`Config ${round} looks fine. ${'explanation '.repeat(round === 3 ? 300 : 3)}`));
  }
  history.push(user('Now deploy config 9 to staging, then run the smoke test.'));
  history.push(calls('t10', 'bash', { command: 'deploy conf/9.yaml staging' }));
  history.push(result('t10', 'deployed'));
  return history;
}

/** Both providers' rules on the wire: Anthropic alternates and answers every tool_use next; OpenAI's tool messages follow their call. */
function wireProblems(messages: Message[]): string[] {
  const problems: string[] = [];
  const anthropic = toParams({ system: 's', messages, tools: [], maxTokens: 100 }, 'claude-x', false, new ThinkingMemory()).messages;
  anthropic.forEach((message, i) => {
    if (i === 0 && message.role !== 'user') problems.push('anthropic: first message not user');
    if (i > 0 && anthropic[i - 1]?.role === message.role) problems.push(`anthropic: ${i - 1} and ${i} share a role`);
  });
  const openai = toChatMessages({ system: 's', messages, tools: [], maxTokens: 100 });
  const open = new Set<string>();
  for (const message of openai) {
    if (message.role === 'assistant') {
      if (open.size) problems.push('openai: tool calls left unanswered');
      open.clear();
      for (const call of message.tool_calls ?? []) open.add(call.id);
    } else if (message.role === 'tool') {
      if (!open.delete(message.tool_call_id)) problems.push(`openai: tool message ${message.tool_call_id} follows no call`);
    } else if (message.role === 'user' && open.size) {
      problems.push('openai: user message before every tool answered');
    }
  }
  return problems;
}

function expectSound(compacted: Message[], original: Message[]): void {
  expect(invariantProblems(compacted, newestPersonMessage(original))).toEqual([]);
  expect(wireProblems(compacted)).toEqual([]);
}

describe('compaction level 1: old tool results', () => {
  it('clears all but the newest five results of compactable tools, saying what was cleared', () => {
    const history = craftedHistory();
    const compacted = clearOldToolResults(history, 5);
    const contents = compacted.flatMap((m) => m.content.flatMap((b) => (b.type === 'tool_result' ? [b.content] : [])));
    expect(contents.filter((c) => c.startsWith('[Old result of read_file conf/'))).toHaveLength(6);
    expect(contents[0]).toMatch(/^\[Old result of read_file conf\/0\.yaml cleared to save space \(3300 chars\)/);
    expect(contents.at(-1)).toBe('deployed');
    expectSound(compacted, history);
  });

  it('leaves results of tools that cannot simply be run again', () => {
    const history = [user('ask me'), calls('q1', 'ask_user', { question: 'which?' }), result('q1', 'the blue one'), said('ok')];
    expect(clearOldToolResults(history, 0)).toEqual(history);
  });
});

describe('compaction level 2: long old texts', () => {
  it('keeps head and tail of long old texts and leaves the recent messages and the newest request whole', () => {
    const history = craftedHistory();
    const compacted = collapseLongTexts(history, 6);
    const round2 = compacted[8]?.content[0];
    // The cut says where the whole text is: the person's words are found by session_search.
    expect(round2?.type === 'text' && round2.text).toMatch(/^Round 2: please check config 2\. detail[\s\S]*…\[collapsed \d+ chars; session_search finds the whole text\]…[\s\S]*detail $/);
    expect(compacted.slice(-6)).toEqual(history.slice(-6));
    expectSound(compacted, history);
  });

  it('keeps the whole of a cut paste or tool output in the workspace and names the file; a tool that can run again is run again', () => {
    const kept = new Map<string, string>();
    const keep = (text: string) => {
      const name = `kept/${kept.size + 1}.txt`;
      kept.set(name, text);
      return name;
    };
    const log = `ERROR line\n`.repeat(400);
    const history = [user(`Here is the log:\n${log}`), calls('a', 'ask_user', { question: 'which?' }), result('a', `answer ${'x'.repeat(3000)}`), calls('b', 'read_file', { path: 'big.txt' }), result('b', 'y'.repeat(3000)), said('ok'), ...craftedHistory().slice(-6)];
    const compacted = collapseLongTexts(history, 6, keep);
    const paste = compacted[0]?.content[0];
    expect(paste?.type === 'text' && paste.text).toMatch(/…\[collapsed \d+ chars; the whole text is kept in the workspace: kept\/1\.txt\]…/);
    expect(kept.get('kept/1.txt')).toBe(`Here is the log:\n${log}`);
    const asked = compacted[2]?.content[0];
    expect(asked?.type === 'tool_result' && asked.content).toContain('the whole output is kept in the workspace: kept/2.txt');
    const read = compacted[4]?.content[0];
    expect(read?.type === 'tool_result' && read.content).toContain('run read_file again for the whole output');
    expect(kept.size).toBe(2);
  });
});

describe('compaction level 3: outline of old rounds', () => {
  it('replaces the older rounds with who asked what and which tools ran on which files, keeping the recent ones', () => {
    const history = craftedHistory();
    const cut = chooseCut(history, 6) as number;
    const text = summaryText(3, cut, outline(history.slice(0, cut)), '<carried-state>\nTask in progress: deploy\n</carried-state>');
    const compacted = withSummary(history, cut, text);
    const first = compacted[0]?.content[0];
    expect(first?.type === 'text' && first.text).toContain('The person: Round 0: please check config 0.');
    expect(first?.type === 'text' && first.text).toContain('hob ran read_file conf/1.yaml');
    expect(first?.type === 'text' && first.text).toContain('<carried-state>');
    expect(compacted.length).toBeLessThan(history.length);
    expectSound(compacted, history);
  });

  it('keeps the newest request whole even when the cut falls inside its tool loop', () => {
    const history = [user('x'), said('y'), user('Do the five steps.'), calls('a', 'bash', { command: 'step 1' }), result('a', 'ok'), calls('b', 'bash', { command: 'step 2' }), result('b', 'ok')];
    const cut = chooseCut(history, 2) as number;
    expect(history[cut]?.role).toBe('assistant');
    const compacted = withSummary(history, cut, summaryText(3, cut, outline(history.slice(0, cut)), ''));
    expect(JSON.stringify(compacted[0])).toContain('Do the five steps.');
    expectSound(compacted, history);
  });

  it('never cuts between a tool call and its result', () => {
    const history = craftedHistory();
    for (let keep = 1; keep < history.length; keep += 1) {
      const cut = chooseCut(history, keep);
      if (cut === undefined) continue;
      expectSound(withSummary(history, cut, 'summary'), history);
    }
  });
});
