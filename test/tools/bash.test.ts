import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool, HeadTailBuffer } from '../../src/tools/bash.js';
import { makeContext, makeWorkspace, removeWorkspace, runTool } from './tool-harness.js';

/**
 * Alive means: signalable and not a zombie. Where PID 1 does not reap orphans (some
 * containers), a killed grandchild lingers as a zombie — dead, but still signalable.
 */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/**
 * A process closes its pipes slightly before it finishes exiting, so the result (which waits
 * for the pipes) can arrive a moment before the last child is gone: poll briefly, then assert.
 */
async function survivors(pids: number[]): Promise<number[]> {
  for (let attempt = 0; attempt < 100 && pids.some(isAlive); attempt += 1) await sleep(20);
  return pids.filter(isAlive);
}

async function readPids(file: string): Promise<number[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map(Number);
}

/** Starts three sleeps at different depths (child, grandchild in a subshell, foreground) and records their PIDs. */
const SPAWN_FAMILY =
  'sleep 300 & echo $! >> pids; ( sleep 300 & echo $! >> pids; wait ) & echo $! >> pids; sleep 300 & echo $! >> pids; wait';

let workspace: string;
beforeEach(async () => {
  workspace = await makeWorkspace();
});
afterEach(async () => {
  await removeWorkspace(workspace);
});

describe('bash tool', () => {
  const tool = bashTool({ killGraceMs: 300 });

  it('merges stdout and stderr in the order they were written', async () => {
    const result = await runTool(tool, { command: 'echo one; echo two >&2; echo three; echo four >&2' }, makeContext(workspace));
    expect(result.content).toBe('one\ntwo\nthree\nfour\n[exit code 0]');
    expect(result.isError).toBe(false);
  });

  it('reports a non-zero exit code as an error the model can read', async () => {
    const result = await runTool(tool, { command: 'echo partial; exit 3' }, makeContext(workspace));
    expect(result.isError).toBe(true);
    expect(result.content).toBe('partial\n[exit code 3]');
  });

  it('says so when a command printed nothing', async () => {
    const result = await runTool(tool, { command: 'true' }, makeContext(workspace));
    expect(result.content).toBe('(no output)\n[exit code 0]');
  });

  it('runs in the workspace directory', async () => {
    const result = await runTool(tool, { command: 'pwd; touch made-here' }, makeContext(workspace));
    expect(result.content.split('\n')[0]).toBe(workspace);
    await expect(readFile(path.join(workspace, 'made-here'), 'utf8')).resolves.toBe('');
  });

  it('reports a missing workspace instead of crashing', async () => {
    const result = await runTool(tool, { command: 'pwd' }, makeContext(path.join(workspace, 'gone')));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Could not start bash: .*ENOENT.*\(in .*gone\)$/);
  });

  it('keeps bash error messages with their real line numbers', async () => {
    const result = await runTool(tool, { command: 'no-such-command-xyz' }, makeContext(workspace));
    expect(result.content).toMatch(/line 1: no-such-command-xyz: command not found/);
    expect(result.content).toMatch(/\[exit code 127\]$/);
  });

  it('stops a command at its timeout, together with every process it started', async () => {
    const result = await runTool(tool, { command: SPAWN_FAMILY, timeout_seconds: 1 }, makeContext(workspace));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/\[timed out after 1s; the command and its child processes were stopped\]$/);
    const pids = await readPids(path.join(workspace, 'pids'));
    expect(pids).toHaveLength(4);
    expect(await survivors(pids)).toEqual([]);
  });

  it('kills processes that ignore SIGTERM once the grace period is over', async () => {
    const command = "trap '' TERM; sleep 300 & echo $! >> pids; sleep 300";
    const result = await runTool(tool, { command, timeout_seconds: 1 }, makeContext(workspace));
    expect(result.content).toMatch(/timed out/);
    const pids = await readPids(path.join(workspace, 'pids'));
    expect(pids).toHaveLength(1);
    expect(await survivors(pids)).toEqual([]);
  });

  it('stops the command and its children when the run is cancelled', async () => {
    const controller = new AbortController();
    const pending = runTool(tool, { command: SPAWN_FAMILY }, makeContext(workspace, controller.signal));
    const pidFile = path.join(workspace, 'pids');
    while ((await readPids(pidFile)).length < 4) await sleep(10);
    controller.abort();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/\[cancelled; the command and its child processes were stopped\]$/);
    expect(await survivors(await readPids(pidFile))).toEqual([]);
  });

  it('does not start a command when the run is already cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runTool(tool, { command: 'touch should-not-exist' }, makeContext(workspace, controller.signal));
    expect(result).toEqual({ content: 'cancelled before the command started', isError: true });
    await expect(readFile(path.join(workspace, 'should-not-exist'))).rejects.toThrow();
  });

  it('stops background processes a finished command left behind, and says so', async () => {
    const command = 'sleep 300 & echo $! > pid; sleep 300 > /dev/null 2>&1 & echo $! >> pid; echo done';
    const result = await runTool(tool, { command }, makeContext(workspace));
    expect(result.content).toMatch(/^done\n/);
    expect(result.content).toMatch(/background processes the command left running were stopped/);
    expect(result.content).toMatch(/\[exit code 0\]$/);
    const pids = await readPids(path.join(workspace, 'pid'));
    expect(pids).toHaveLength(2);
    expect(await survivors(pids)).toEqual([]);
  });

  it('caps huge output, keeping its beginning and its end', async () => {
    // 2 MB: forty times what is kept (50,000 characters each end), trimmed twenty times over.
    const command = 'echo FIRST; head -c 2000000 /dev/zero | tr "\\0" x; echo; echo LAST';
    const result = await runTool(tool, { command }, makeContext(workspace));
    expect(result.content.length).toBeLessThan(110_000);
    expect(result.content.startsWith('FIRST\n')).toBe(true);
    expect(result.content).toMatch(/characters of output dropped/);
    expect(result.content).toMatch(/LAST\n\[exit code 0\]$/);
  });

  it('streams output lines as progress while the command runs', async () => {
    const streaming = bashTool({ progressIntervalMs: 0 });
    const ctx = makeContext(workspace);
    // The command waits until the test has seen its first line as progress.
    const command = 'echo ready; while [ ! -f go ]; do sleep 0.02; done; echo finished';
    const pending = runTool(streaming, { command }, ctx);
    while (!ctx.progressLines.includes('ready')) await sleep(10);
    await writeFile(path.join(workspace, 'go'), '');
    expect((await pending).content).toBe('ready\nfinished\n[exit code 0]');
    expect(ctx.progressLines).toEqual(['ready', 'finished']);
  });

  it('exposes the command for permission checks and is never read-only', () => {
    expect(tool.target?.({ command: 'rm -rf build' })).toEqual({ command: 'rm -rf build' });
    expect(tool.readOnly({ command: 'ls' })).toBe(false);
  });

  it('rejects a timeout above 600 seconds', () => {
    expect(tool.input.safeParse({ command: 'ls', timeout_seconds: 601 }).success).toBe(false);
  });
});

describe('HeadTailBuffer', () => {
  it('keeps the first and last characters and counts what it dropped', () => {
    const buffer = new HeadTailBuffer(5);
    for (const chunk of ['abc', 'defgh', 'ijklmnop', 'qrstuvwxyz']) buffer.push(chunk);
    expect(buffer.text()).toBe('abcde\n[… 16 characters of output dropped …]\nvwxyz');
  });
});
