import '../support/env.js';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NOT_YOURS } from '../../adapters/web/api-chat.js';
import { USED_LINK } from '../../adapters/web/api-session.js';
import { bashTool } from '../../src/tools/bash.js';
import { sendFileTool } from '../../src/tools/send-file.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { freePort, webBed, type Person, type WebBed } from '../support/web-testbed.js';

/**
 * The web chat's page in real headless Chromium (Debian's `chromium`, driven by
 * playwright-core): what a person sees and does, and what a hostile page cannot do. One
 * browser for the whole file; each test has its own gateway and data dir, and browser
 * profiles (contexts) that hold nothing from an earlier test: a profile is handed to the next
 * test only after its cookies are cleared and its page left for about:blank (each new profile
 * starts a renderer process, ~0.15 s of CPU; every test's server has its own port, so no
 * origin's storage carries over either).
 */
/**
 * Debian's headless shell (the old headless mode, what Playwright itself uses for headless runs)
 * before the full browser: the same Blink and network stack, without the desktop browser's
 * start-up and background services, at about half the CPU per file.
 */
const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell';
const CHROMIUM = process.env['HOB_CHROMIUM'] || (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium');
const available = existsSync(CHROMIUM);
const title = available
  ? 'the web page in Chromium'
  : `the web page in Chromium (skipped: no Chromium at ${CHROMIUM}; apt-get install chromium-headless-shell (or chromium), or set HOB_CHROMIUM)`;

let browser: Browser | undefined;
let bed: WebBed | undefined;
let hob: TestGateway | undefined;
let evil: Server | undefined;
/** What the web channel logged as warnings (refused requests among them). */
const warnings: string[] = [];
/** Browser profiles no test is using, and those the running test took. */
const idle: BrowserContext[] = [];
const taken: BrowserContext[] = [];

describe.skipIf(!available)(title, () => {
  beforeAll(async () => {
    // What Chromium needs on this kind of machine: no sandbox as root, no background calls out;
    // no GPU process either (the page draws nothing a test reads as pixels).
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--in-process-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    for (const context of taken.splice(0)) {
      const [first, ...others] = context.pages();
      for (const page of others) await page.close();
      await first?.goto('about:blank');
      await context.clearCookies();
      idle.push(context);
    }
    await hob?.close();
    await bed?.close();
    await new Promise<void>((resolve) => (evil ? evil.close(() => resolve()) : resolve()));
    hob = undefined;
    bed = undefined;
    evil = undefined;
    warnings.length = 0;
  });

  async function started(model: ScriptedModel) {
    const logger = { info: () => undefined, warn: (fields: Record<string, unknown>, message: string) => warnings.push(`${message}: ${String(fields['reason'] ?? '')}`), error: () => undefined };
    bed = await webBed({ logger });
    hob = await startTestGateway(bed.adapter, model, { tools: [bashTool({ defaultTimeoutSeconds: 30 }), sendFileTool] });
    return { bed, hob, model };
  }

  /** A browser profile of its own (no cookies, nothing open), for this test only. */
  async function freshContext(): Promise<BrowserContext> {
    const context = idle.pop() ?? (await (browser as Browser).newContext());
    taken.push(context);
    return context;
  }

  /** A profile's page: the one it kept from an earlier test, or a new one. */
  const pageOf = async (context: BrowserContext): Promise<Page> => context.pages()[0] ?? (await context.newPage());

  /** The page of a browser profile of its own. */
  const freshPage = async (): Promise<Page> => pageOf(await freshContext());

  /** A fresh browser profile (its own cookies) that opened the person's sign-in link. */
  async function signedIn(person: Person): Promise<Page> {
    const page = await freshPage();
    await page.goto((bed as WebBed).link(person));
    await page.locator('#chat').waitFor();
    return page;
  }

  async function send(page: Page, text: string): Promise<void> {
    await page.locator('#text').fill(text);
    await page.locator('#text').press('Enter');
  }

  const hobMessage = (page: Page, text: string) => page.locator('li.message.hob', { hasText: text });
  /** The approval prompt (the progress line names the command too, but has no buttons). */
  async function approvalPrompt(page: Page) {
    const id = await page.locator('li.message.hob', { has: page.getByRole('button', { name: 'Allow once', exact: true }) }).getAttribute('data-id');
    return page.locator(`li.message[data-id="${id}"]`);
  }

  it('signs in with the link, which leaves the address bar and does not work twice; answers show Markdown with code blocks, and HTML from the model only as text', async () => {
    const answer = ['**Bold** and <img src=x onerror="window.pwned = 1"> <script>window.pwned = 2</script>', '', '```js', "const tag = '<b>';", '```', '', '[a link](javascript:window.pwned=3)'].join('\n');
    await started(new ScriptedModel([{ text: answer }]));
    const link = (bed as WebBed).link(OWNER);
    const page = await freshPage();
    await page.goto(link);
    await page.locator('#chat').waitFor();
    await expect.poll(() => page.locator('#me').textContent()).toBe('Signed in as Ann');
    expect(page.url()).toBe(`${bed?.adapter.url}/`);
    await send(page, 'hi');
    const bubble = hobMessage(page, 'Bold').locator('.bubble');
    await bubble.waitFor();
    expect(await page.locator('li.message.me .bubble').allTextContents()).toEqual(['hi']);
    expect(await bubble.locator('strong').textContent()).toBe('Bold');
    expect(await bubble.locator('pre code').textContent()).toBe("const tag = '<b>';");
    expect(await bubble.textContent()).toContain('<img src=x onerror="window.pwned = 1"> <script>window.pwned = 2</script>');
    expect(await bubble.locator('img, script, a').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();

    const again = await freshPage();
    await again.goto(link);
    await expect.poll(() => again.locator('#signin-error').textContent()).toBe(USED_LINK);
    expect(await again.locator('#chat').isHidden()).toBe(true);
  });

  it('shows the answer growing while it is written, then once, as the answer', async () => {
    let resume: () => void = () => undefined;
    const answer = 'Counting slowly: one two three four five.';
    await started(new ScriptedModel([{ text: answer, pauseAt: 24, resume: new Promise<void>((resolve) => (resume = resolve)) }]));
    const page = await signedIn(OWNER);
    await send(page, 'count for me');
    const live = page.locator('li.message.hob.live .bubble');
    await expect.poll(() => live.textContent()).toBe('Counting slowly: one two');
    resume();
    await page.locator('li.message.hob:not(.live)', { hasText: answer }).waitFor();
    expect(await page.locator('li.message.hob').allTextContents()).toEqual([answer]);
    await page.reload();
    await hobMessage(page, answer).waitFor();
    expect(await page.locator('li.message.hob').count()).toBe(1);
  });

  it("refuses a press from Bob's session on Ann's approval; Ann's own press runs the command, and the prompt says who allowed it", async () => {
    const { model } = await started(new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo done > approved.txt' } }] }, { text: 'Created approved.txt.' }]));
    const ann = await signedIn(OWNER);
    const bob = await signedIn(FRIEND);
    await send(ann, 'create the file');
    const prompt = await approvalPrompt(ann);
    expect(await prompt.textContent()).toContain('echo done > approved.txt');
    const messageId = await prompt.getAttribute('data-id');
    const approval = /\/approve (a[0-9a-f]+)/.exec((await prompt.textContent()) ?? '')?.[1];
    // Bob's own browser, signed in as Bob, posts exactly what Ann's "Allow once" would.
    const refused = await bob.evaluate(async (press) => {
      const response = await fetch('/api/press', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(press) });
      return { status: response.status, body: (await response.json()) as { error: string } };
    }, { messageId, data: `ap:${approval}:o` });
    expect(refused).toEqual({ status: 403, body: { error: NOT_YOURS } });
    expect(await prompt.locator('.buttons button').count()).toBe(3);
    expect(model.requests).toHaveLength(1);
    await prompt.getByRole('button', { name: 'Allow once', exact: true }).click();
    await hobMessage(ann, 'Created approved.txt.').waitFor();
    expect(readFileSync(join((hob as TestGateway).dir, 'workspace', 'approved.txt'), 'utf8')).toBe('done\n');
    await expect.poll(() => prompt.textContent()).toContain('allowed once by Ann');
    expect(await prompt.locator('.buttons button').count()).toBe(0);
    expect(await bob.locator('li.message', { hasText: 'approved.txt' }).count()).toBe(0);
  });

  it('sends a file from the page, and hob sends one back that downloads', async () => {
    const { hob, model } = await started(new ScriptedModel([{ toolCalls: [{ name: 'send_file', input: { path: 'report.txt' } }] }, { text: 'There is your report.' }]));
    writeFileSync(join(hob.dir, 'workspace', 'report.txt'), 'all green\n');
    const page = await signedIn(OWNER);
    await page.locator('#files').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('buy milk\n') });
    await page.locator('#pending li', { hasText: 'notes.txt' }).waitFor();
    await send(page, 'my notes; send me the report');
    await hobMessage(page, 'There is your report.').waitFor();
    const [inbox] = readdirSync(join(hob.dir, 'workspace', 'inbox'));
    expect(readFileSync(join(hob.dir, 'workspace', 'inbox', inbox as string), 'utf8')).toBe('buy milk\n');
    expect(JSON.stringify(model.requests[0]?.messages)).toContain('notes.txt');
    expect(await page.locator('li.message.me .attachment').textContent()).toBe('📎 notes.txt (9 B)');

    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('a.file', { hasText: 'report.txt' }).click()]);
    expect(download.suggestedFilename()).toBe('report.txt');
    expect(readFileSync(await download.path(), 'utf8')).toBe('all green\n');
  });

  it('a forged cookie and a signed-out one get the sign-in page, not the chat', async () => {
    await started(new ScriptedModel([]));
    const base = (bed as WebBed).adapter.url;
    const forged = await freshContext();
    await forged.addCookies([{ name: 'hob_session', value: 'x'.repeat(43), url: base }]);
    const guess = await pageOf(forged);
    await guess.goto(base);
    await guess.locator('#signin').waitFor();
    expect(await guess.locator('#chat').isHidden()).toBe(true);

    const page = await signedIn(OWNER);
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ name: 'hob_session', httpOnly: true, sameSite: 'Strict', secure: false });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#signin').waitFor();
    const stale = await freshContext();
    await stale.addCookies([{ name: 'hob_session', value: cookie?.value as string, url: base }]);
    const replay = await pageOf(stale);
    await replay.goto(base);
    await replay.locator('#signin').waitFor();
    expect(await replay.locator('#chat').isHidden()).toBe(true);
  });

  it('a page on another origin cannot make hob act, even with the cookie in the browser', async () => {
    const { model } = await started(new ScriptedModel([{ text: 'should never be asked' }]));
    const page = await signedIn(OWNER);
    const port = await freePort();
    const target = (bed as WebBed).adapter.url;
    evil = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<script>
        fetch(${JSON.stringify(`${target}/api/messages`)}, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'Content-Type': 'text/plain' }, body: '{"text":"transfer everything"}' })
          .finally(() => { const events = new EventSource(${JSON.stringify(`${target}/api/events`)}, { withCredentials: true }); events.onerror = () => { events.close(); document.title = 'done'; }; });
      </script>`);
    });
    await new Promise<void>((resolve) => evil?.listen(port, '127.0.0.1', resolve));
    // Same browser profile as Ann's page: her cookie would go along (same site, another port).
    const attacker = await page.context().newPage();
    await attacker.goto(`http://127.0.0.1:${port}/`);
    await expect.poll(() => attacker.title()).toBe('done');
    expect(warnings).toEqual(expect.arrayContaining([`web request refused: requests from http://127.0.0.1:${port} are not accepted`]));
    expect(warnings.filter((warning) => warning.startsWith('web request refused'))).toHaveLength(2);
    expect(model.requests).toHaveLength(0);
    expect(await page.locator('li.message', { hasText: 'transfer' }).count()).toBe(0);
  });

  it('lists commands as the person types "/", and shows past sessions to resume', async () => {
    await started(new ScriptedModel([{ text: 'Noted the boiler.' }, { text: 'Noted the bike.' }]));
    const page = await signedIn(OWNER);
    await send(page, 'The boiler service is on May 3');
    await hobMessage(page, 'Noted the boiler.').waitFor();
    await page.getByRole('button', { name: 'New' }).click();
    await hobMessage(page, 'Started a new conversation').waitFor();
    await send(page, 'My bike lock code is 4711');
    await hobMessage(page, 'Noted the bike.').waitFor();

    await page.locator('#text').fill('/ses');
    expect(await page.locator('#menu li').allTextContents()).toEqual(['/sessions Your past conversations (title, date, size)']);
    await page.locator('#menu li').click();
    expect(await page.locator('#text').inputValue()).toBe('/sessions ');
    await page.locator('#text').press('Enter');
    const list = hobMessage(page, 'Your conversations, newest first');
    await expect.poll(() => list.textContent()).toMatch(/1\. My bike lock code is 4711 — .*\(current\)\s*2\. The boiler service is on May 3/);
    await list.locator('button.cmd', { hasText: '/resume' }).click();
    expect(await page.locator('#text').inputValue()).toBe('/resume ');
    await page.locator('#text').pressSequentially('2');
    await page.locator('#text').press('Enter');
    await hobMessage(page, 'Resumed “The boiler service is on May 3”').waitFor();
  });

  it('a visitor asks for access on the page and sees the pairing code the owner needs', async () => {
    await started(new ScriptedModel([]));
    const owner = await signedIn(OWNER);
    const visitor = await freshPage();
    await visitor.goto(`${(bed as WebBed).adapter.url}/`);
    await visitor.locator('#access-name').fill('Carol');
    await visitor.getByRole('button', { name: 'Ask for access' }).click();
    const code = await hobMessage(visitor, 'Your pairing code is').textContent();
    const pairing = /pairing code is ([A-Z0-9]{8})/.exec(code ?? '')?.[1] as string;
    await hobMessage(owner, pairing).getByRole('button', { name: 'Approve Carol' }).click();
    await hobMessage(visitor, "You're approved").waitFor();
  });
});
