import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runChat } from '../../src/cli/chat.js';
import { QueryEngine } from '../../src/engine/query-engine.js';
import { createLogger } from '../../src/logger.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { engineDeps } from '../support/deps.js';

/** `hob chat` in a terminal: what a person typing while hob works sees. */

function terminal() {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  return { input, output, shown: () => shown };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
};

describe('hob chat in a terminal', () => {
  it('answers /status while a run is busy instead of sending it to the model, and /stop stops the run', async () => {
    const model = new ScriptedModel([{ hang: true }]);
    const engine = new QueryEngine('console:local', engineDeps(model));
    const tty = terminal();
    const chat = runChat({ engine, userId: 'ann', logger: createLogger({ level: 'silent', destination: 'silent' }), approvalTimeoutSeconds: 30, input: tty.input, output: tty.output, interactive: true });
    tty.input.write('think hard\n');
    await until(() => model.requests.length === 1);
    tty.input.write('/status\n');
    await until(() => tty.shown().includes('session ses_'));
    tty.input.write('/new\n');
    await until(() => tty.shown().includes('/new has to wait until this answer is done'));
    tty.input.write('/stop\n');
    await until(() => tty.shown().includes('(stopped)'));
    tty.input.end();
    await chat;
    expect(model.requests).toHaveLength(1);
    expect(JSON.stringify(model.requests[0]?.messages)).not.toContain('/status');
    expect(engine.messages.some((message) => JSON.stringify(message).includes('/status'))).toBe(false);
  });
});
