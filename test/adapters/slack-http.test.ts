import '../support/env.js';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { REQUIRED_SCOPES } from '../../adapters/slack/scopes.js';
import type { SlackAdapter } from '../../adapters/slack/slack-adapter.js';
import { runDoctor } from '../../src/cli/doctor.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { slackAdapter } from '../support/slack-testbed.js';

const ann = { ...OWNER };
let fake: FakeSlack | undefined;
let hob: TestGateway | undefined;

afterEach(async () => {
  await hob?.close();
  hob = undefined;
  await fake?.close();
  fake = undefined;
});

describe('slack HTTP mode (signed requests to /slack/events)', () => {
  async function startHttp(model: ScriptedModel): Promise<{ slack: FakeSlack; adapter: SlackAdapter; post(body: string, headers: Record<string, string>): Promise<number> }> {
    const slack = await startFakeSlack();
    fake = slack;
    slack.person(ann);
    const adapter = slackAdapter(slack, { appToken: undefined, http: { signingSecret: slack.signingSecret, port: 0, host: '127.0.0.1' } });
    hob = await startTestGateway(adapter, model);
    const url = `http://127.0.0.1:${adapter.httpAddress?.port}/slack/events`;
    return {
      slack,
      adapter,
      post: async (body, headers) => (await fetch(url, { method: 'POST', headers, body })).status,
    };
  }

  it('answers a signed event, refuses a bad or stale signature, and handles a retry once', async () => {
    const model = new ScriptedModel([{ text: 'over HTTP' }, { text: 'second' }]);
    const { slack, post } = await startHttp(model);
    const event = (text: string, id: string) => JSON.stringify(slack.envelopeBody(slack.messageEvent(ann, dmOf(ann.id), text, slack.web.nextTs(), { channelType: 'im' }), id));
    const forged = event('forged', 'EvF1');
    expect(await post(forged, { ...slack.signedRequest(forged), 'x-slack-signature': 'v0=deadbeef' })).toBe(401);
    const stale = event('stale', 'EvS1');
    expect(await post(stale, slack.signedRequest(stale, { timestamp: Math.floor(Date.now() / 1000) - 600 }))).toBe(401);
    const good = event('hello over http', 'EvG1');
    expect(await post(good, slack.signedRequest(good))).toBe(200);
    expect(await post(good, slack.signedRequest(good, { retryNum: 1 }))).toBe(200);
    await slack.waitFor(() => slack.seen(dmOf(ann.id)).find((message) => message.text === 'over HTTP'), 5000, 'the answer');
    const next = event('next', 'EvG2');
    expect(await post(next, slack.signedRequest(next))).toBe(200);
    await slack.waitFor(() => slack.seen(dmOf(ann.id)).find((message) => message.text === 'second'), 5000, 'the second answer');
    expect(model.requests).toHaveLength(2);
    const seenByModel = JSON.stringify(model.requests.map((request) => request.messages));
    expect(seenByModel).not.toContain('forged');
    expect(seenByModel).not.toContain('stale');
  });

  it('refuses a correctly signed request dated more than five minutes in the future, and takes one just inside the window', async () => {
    const model = new ScriptedModel([{ text: 'inside the window' }]);
    const { slack, post } = await startHttp(model);
    const event = (text: string, id: string) => JSON.stringify(slack.envelopeBody(slack.messageEvent(ann, dmOf(ann.id), text, slack.web.nextTs(), { channelType: 'im' }), id));
    const now = Math.floor(Date.now() / 1000);
    const future = event('from the future', 'EvF10');
    expect(await post(future, slack.signedRequest(future, { timestamp: now + 600 }))).toBe(401);
    const farFuture = event('from far ahead', 'EvF11');
    expect(await post(farFuture, slack.signedRequest(farFuture, { timestamp: now + 86_400 }))).toBe(401);
    const soon = event('a little clock skew', 'EvF12');
    expect(await post(soon, slack.signedRequest(soon, { timestamp: now + 60 }))).toBe(200);
    await slack.waitFor(() => slack.seen(dmOf(ann.id)).find((message) => message.text === 'inside the window'), 5000, 'the answer');
    expect(model.requests).toHaveLength(1);
    expect(JSON.stringify(model.requests[0]?.messages)).not.toMatch(/future|far ahead/);
  });
});

describe('slack in hob doctor', () => {
  it('checks both tokens', async () => {
    fake = await startFakeSlack();
    const config = parseHobConfig(`channels:\n  slack: { bot_token: ${fake.botToken}, app_token: ${fake.appToken}, api_url: "${fake.apiUrl}" }\n`, { env: {} });
    const checks = await runDoctor(config, undefined);
    expect(checks.find((check) => check.name === 'slack bot token')).toMatchObject({ ok: true, detail: expect.stringContaining('@hob') });
    expect(checks.find((check) => check.name === 'slack app token')).toMatchObject({ ok: true });
    expect(fake.web.callsOf('apps.connections.open')[0]?.token).toBe(fake.appToken);
    expect(JSON.stringify(checks)).not.toContain(fake.botToken);
  });

  it('names a missing scope and a wrong app token', async () => {
    fake = await startFakeSlack();
    fake.web.scopes = fake.web.scopes.filter((scope) => scope !== 'reactions:write');
    const config = parseHobConfig(`channels:\n  slack: { bot_token: ${fake.botToken}, app_token: xapp-wrong, api_url: "${fake.apiUrl}" }\n`, { env: {} });
    const checks = await runDoctor(config, undefined);
    expect(checks.find((check) => check.name === 'slack bot token')).toMatchObject({ ok: false, detail: expect.stringContaining('lacks the scope reactions:write') });
    expect(checks.find((check) => check.name === 'slack app token')).toMatchObject({ ok: false, detail: expect.stringContaining('invalid_auth') });
  });

  it('the manifest asks for exactly the scopes hob checks', () => {
    const manifest = parse(readFileSync(new URL('../../adapters/slack/manifest.yaml', import.meta.url), 'utf8')) as { oauth_config: { scopes: { bot: string[] } }; settings: { socket_mode_enabled: boolean } };
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual([...REQUIRED_SCOPES].sort());
    expect(manifest.settings.socket_mode_enabled).toBe(true);
  });
});

describe('slack start with bad tokens', () => {
  it('names the key to fix when Slack refuses the bot token or the app token', async () => {
    const slack = (fake = await startFakeSlack());
    const badBot = slackAdapter(slack, { botToken: 'xoxb-wrong' });
    await expect(badBot.start({ message: () => undefined, button: () => undefined })).rejects.toThrow('Slack refused the bot token (invalid_auth); check channels.slack.bot_token');
    const badApp = slackAdapter(slack, { appToken: 'xapp-wrong' });
    await expect(badApp.start({ message: () => undefined, button: () => undefined })).rejects.toThrow('check channels.slack.app_token');
    // The socket connects while auth.test is asked (issue 20): a refused token leaves none open.
    await vi.waitFor(() => expect(slack.socket.open()).toHaveLength(0));
  });
});
