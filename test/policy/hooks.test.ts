import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHookRunner, type CommandHook, type HooksConfig, type HttpHook } from '../../src/policy/hooks.js';

const dir = mkdtempSync(join(tmpdir(), 'hob-hooks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const command = (cmd: string, extra: Partial<CommandHook> = {}): CommandHook => ({
  type: 'command',
  command: cmd,
  timeout_seconds: 10,
  block_on_failure: false,
  ...extra,
});
const runner = (config: HooksConfig, logger?: { warn(d: Record<string, unknown>, m: string): void }) =>
  createHookRunner(config, { cwd: dir, logger });
const bashCall = { tool_name: 'bash', tool_input: { command: 'npm test' } };

describe('command hooks', () => {
  it('a failing pre_tool_use hook with block_on_failure blocks the call and tells the model why', async () => {
    const hooks = runner({
      pre_tool_use: [command('echo "no deploys on friday" >&2; exit 1', { block_on_failure: true })],
    });
    const result = await hooks.run('pre_tool_use', bashCall);
    expect(result.blocked).toBe(true);
    expect(result.reason).toContain('The bash call was blocked by a pre_tool_use hook');
    expect(result.reason).toContain('exited with code 1');
    expect(result.reason).toContain('no deploys on friday');
  });

  it('a failing hook without block_on_failure is logged and the call goes ahead', async () => {
    const warnings: string[] = [];
    const hooks = runner(
      { pre_tool_use: [command('exit 1'), command(`touch ${join(dir, 'second-ran')}`)] },
      { warn: (_details, message) => warnings.push(message) },
    );
    const result = await hooks.run('pre_tool_use', bashCall);
    expect(result.blocked).toBe(false);
    expect(result.results.map((r) => r.ok)).toEqual([false, true]);
    expect(existsSync(join(dir, 'second-ran'))).toBe(true);
    expect(warnings).toHaveLength(1);
  });

  it('a pre_tool_use hook exiting with code 2 blocks even without block_on_failure', async () => {
    const hooks = runner({ pre_tool_use: [command('echo "rm is not allowed here" >&2; exit 2')] });
    const result = await hooks.run('pre_tool_use', bashCall);
    expect(result.blocked).toBe(true);
    expect(result.reason).toContain('exited with code 2');
    expect(result.reason).toContain('rm is not allowed here');
  });

  it('exit code 2 from a post_tool_use hook does not block anything', async () => {
    const hooks = runner({ post_tool_use: [command('exit 2')] });
    expect((await hooks.run('post_tool_use', bashCall)).blocked).toBe(false);
  });

  it('the first blocking hook stops the hooks after it', async () => {
    const marker = join(dir, 'after-block');
    const hooks = runner({ pre_tool_use: [command('exit 2'), command(`touch ${marker}`)] });
    const result = await hooks.run('pre_tool_use', bashCall);
    expect(result.blocked).toBe(true);
    expect(result.results).toHaveLength(1);
    expect(existsSync(marker)).toBe(false);
  });

  it('a matcher limits a tool hook to matching tool names', async () => {
    const hooks = runner({
      pre_tool_use: [command('exit 2', { matcher: 'bash' }), command('exit 2', { matcher: 'mcp__github__*' })],
    });
    expect((await hooks.run('pre_tool_use', { tool_name: 'read_file', tool_input: {} })).results).toHaveLength(0);
    expect((await hooks.run('pre_tool_use', bashCall)).blocked).toBe(true);
    const mcp = await hooks.run('pre_tool_use', { tool_name: 'mcp__github__create_issue', tool_input: {} });
    expect(mcp.blocked).toBe(true);
  });

  it('$ARGUMENTS receives the payload as JSON, safely quoted, and the event is in the environment', async () => {
    const payload = { tool_name: 'bash', tool_input: { command: `echo 'it''s' "$(whoami)" \`id\`; rm -rf x` } };
    const argsFile = join(dir, 'arguments.json');
    const envFile = join(dir, 'env.txt');
    const hooks = runner({
      pre_tool_use: [
        command(`printf '%s' $ARGUMENTS > ${argsFile}; printf '%s|%s' "$HOB_HOOK_EVENT" "$HOB_HOOK_PAYLOAD" > ${envFile}`),
      ],
    });
    const result = await hooks.run('pre_tool_use', payload);
    expect(result.results[0]?.ok).toBe(true);
    expect(JSON.parse(readFileSync(argsFile, 'utf8'))).toEqual(payload);
    expect(readFileSync(envFile, 'utf8')).toBe(`pre_tool_use|${JSON.stringify(payload)}`);
  });

  it('a hook gets the scrubbed environment: none of hob\'s tokens or keys', async () => {
    const envFile = join(dir, 'hook-env.txt');
    process.env.TELEGRAM_BOT_TOKEN = 'sekrit-telegram';
    process.env.ANTHROPIC_API_KEY = 'sekrit-anthropic';
    try {
      await runner({ session_start: [command(`env > ${envFile}`)] }).run('session_start', { session_key: 'telegram:1' });
    } finally {
      delete process.env.TELEGRAM_BOT_TOKEN;
      delete process.env.ANTHROPIC_API_KEY;
    }
    const seen = readFileSync(envFile, 'utf8');
    expect(seen).toContain('HOB_HOOK_EVENT=session_start');
    expect(seen).not.toContain('sekrit');
  });

  it('the payload also arrives on stdin', async () => {
    const stdinFile = join(dir, 'stdin.json');
    const hooks = runner({ session_start: [command(`cat > ${stdinFile}`)] });
    await hooks.run('session_start', { session_key: 'telegram:1' });
    expect(JSON.parse(readFileSync(stdinFile, 'utf8'))).toEqual({ session_key: 'telegram:1' });
  });

  it('a hook that runs past its timeout is killed with its children and counts as a failure', async () => {
    const pidFile = join(dir, 'child.pid');
    const hooks = runner({
      pre_tool_use: [command(`sleep 30 & echo $! > ${pidFile}; wait`, { timeout_seconds: 0.3, block_on_failure: true })],
    });
    const result = await hooks.run('pre_tool_use', bashCall);
    expect(result.blocked).toBe(true);
    expect(result.results[0]?.timedOut).toBe(true);
    expect(result.reason).toContain('timed out after 0.3 s');
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    await expect.poll(() => isGone(pid), { timeout: 5_000 }).toBe(true);
  });

  it('a hook that cannot even start does not throw out of run()', async () => {
    const hooks = createHookRunner(
      { pre_tool_use: [command('true', { block_on_failure: true })] },
      { cwd: join(dir, 'does-not-exist') },
    );
    const result = await hooks.run('pre_tool_use', bashCall);
    expect(result.blocked).toBe(true);
    expect(result.reason).toContain('could not start');
  });

  it('stopping the run kills a hook that is still running and blocks the call', async () => {
    const started = join(dir, 'long-hook-started');
    const controller = new AbortController();
    const hooks = runner({ pre_tool_use: [command(`touch ${started}; sleep 30`)] });
    const pending = hooks.run('pre_tool_use', bashCall, controller.signal);
    await expect.poll(() => existsSync(started), { timeout: 5_000 }).toBe(true);
    controller.abort();
    const result = await pending;
    expect(result.blocked).toBe(true);
    expect(result.reason).toContain('stopped');
  });

  it('an already stopped run does not start hooks and blocks the call', async () => {
    const marker = join(dir, 'stopped-run');
    const hooks = runner({ pre_tool_use: [command(`touch ${marker}`)] });
    const result = await hooks.run('pre_tool_use', bashCall, AbortSignal.abort());
    expect(result.blocked).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('http hooks', () => {
  type Received = { body: unknown; headers: IncomingMessage['headers'] };
  const received: Received[] = [];
  let server: Server;
  let base = '';

  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (text += chunk));
      req.on('end', () => {
        received.push({ body: JSON.parse(text), headers: req.headers });
        if (req.url === '/hang') return; // never answers
        if (req.url === '/fail') {
          res.writeHead(500).end('audit service is down');
          return;
        }
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const http = (path: string, extra: Partial<HttpHook> = {}): HttpHook => ({
    type: 'http',
    url: `${base}${path}`,
    headers: {},
    timeout_seconds: 10,
    block_on_failure: false,
    ...extra,
  });

  it('receives the event and payload as JSON, with the configured headers', async () => {
    received.length = 0;
    const hooks = runner({ post_tool_use: [http('/audit', { headers: { authorization: 'Bearer t0ken' } })] });
    const result = await hooks.run('post_tool_use', { ...bashCall, is_error: false });
    expect(result.blocked).toBe(false);
    expect(result.results[0]).toMatchObject({ ok: true, status: 204 });
    expect(received[0]?.body).toEqual({ event: 'post_tool_use', payload: { ...bashCall, is_error: false } });
    expect(received[0]?.headers.authorization).toBe('Bearer t0ken');
    expect(received[0]?.headers['content-type']).toBe('application/json');
  });

  it('a 500 with block_on_failure blocks and the reason carries the status and body', async () => {
    const hooks = runner({ pre_tool_use: [http('/fail', { block_on_failure: true })] });
    const result = await hooks.run('pre_tool_use', bashCall);
    expect(result.blocked).toBe(true);
    expect(result.reason).toContain('returned HTTP 500');
    expect(result.reason).toContain('audit service is down');
  });

  it('an endpoint that does not answer in time counts as a failure', async () => {
    const hooks = runner({ pre_tool_use: [http('/hang', { timeout_seconds: 0.3, block_on_failure: true })] });
    const result = await hooks.run('pre_tool_use', bashCall);
    expect(result.blocked).toBe(true);
    expect(result.results[0]?.timedOut).toBe(true);
  });

  it('an unreachable endpoint without block_on_failure does not block', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const hooks = runner({ pre_tool_use: [{ ...http('/'), url: `http://127.0.0.1:${port}/` }] });
    const result = await hooks.run('pre_tool_use', bashCall);
    expect(result.blocked).toBe(false);
    expect(result.results[0]?.ok).toBe(false);
    expect(result.results[0]?.failure).toContain('could not be reached');
  });

  it('a fetch that throws is a failed hook, not an exception', async () => {
    const hooks = createHookRunner(
      { pre_tool_use: [http('/', { block_on_failure: true })] },
      {
        cwd: dir,
        fetch: () => {
          throw new Error('boom');
        },
      },
    );
    const result = await hooks.run('pre_tool_use', bashCall);
    expect(result.blocked).toBe(true);
    expect(result.reason).toContain('boom');
  });
});

/** Gone, or a zombie nobody reaps (containers often lack an init that reaps). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}
