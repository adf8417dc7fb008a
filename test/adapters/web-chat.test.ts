import '../support/env.js';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NOT_YOURS } from '../../adapters/web/api-chat.js';
import { webChannel } from '../../adapters/web/index.js';
import { askUserTool } from '../../src/tools/ask-user.js';
import { bashTool } from '../../src/tools/bash.js';
import { sendFileTool } from '../../src/tools/send-file.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { WebPageClient } from '../support/web-client.js';
import { webBed, type WebBed } from '../support/web-testbed.js';

/** A chat on the page through the real gateway: buttons, files, pairing, the menu, `/web`. */
let bed: WebBed | undefined;
let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  await bed?.close();
  hob = undefined;
  bed = undefined;
});

async function started(model: ScriptedModel) {
  bed = await webBed();
  hob = await startTestGateway(bed.adapter, model, { tools: [bashTool({ defaultTimeoutSeconds: 30 }), sendFileTool, askUserTool] });
  return { bed, hob, model };
}

const textOf = (page: WebPageClient, includes: string) =>
  page.waitFor(() => page.botMessages().find((message) => message.text.includes(includes)), `a message containing "${includes}"`);

describe('web chat through the gateway', () => {
  it('refuses a press from another session on an approval in Ann\'s chat; Ann\'s own press runs the command', async () => {
    const { bed, hob, model } = await started(new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo ok > pressed.txt' } }] }, { text: 'Done.' }]));
    const ann = await bed.page(OWNER);
    const bob = await bed.page(FRIEND);
    await ann.say('make the file');
    const prompt = await textOf(ann, 'echo ok > pressed.txt');
    const allow = prompt.buttons.find((button) => button.label === 'Allow once');
    // Bob knows the message id and the button's data (say, from over Ann's shoulder) and posts them.
    const forged = await bob.press(prompt.id, allow?.data as string);
    expect(forged.status).toBe(403);
    expect(bob.notices).toEqual([NOT_YOURS]);
    expect(ann.botMessages().find((message) => message.id === prompt.id)?.buttons).toHaveLength(3);
    expect(model.requests).toHaveLength(1);

    await ann.press(prompt.id, allow?.data as string);
    await textOf(ann, 'Done.');
    expect(readFileSync(join(hob.dir, 'workspace', 'pressed.txt'), 'utf8')).toBe('ok\n');
    expect(ann.botMessages().find((message) => message.id === prompt.id)?.text).toContain('allowed once by Ann');
    expect(ann.notices).toContain('Allowed once.');
    expect(bob.botMessages().some((message) => message.text.includes('pressed.txt'))).toBe(false);
  });

  it('asks with buttons (ask_user) and takes the pressed answer', async () => {
    const { bed, model } = await started(
      new ScriptedModel([{ toolCalls: [{ name: 'ask_user', input: { question: 'Which colour?', options: ['Red', 'Blue'] } }] }, { text: 'Blue it is.' }]),
    );
    const ann = await bed.page(OWNER);
    await ann.say('pick a colour with me');
    const question = await textOf(ann, 'Which colour?');
    expect(question.buttons.map((button) => button.label)).toEqual(['Red', 'Blue']);
    await ann.press(question.id, question.buttons[1]?.data as string);
    await textOf(ann, 'Blue it is.');
    expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain('Blue');
  });

  it('takes a file from the page into the workspace, and sends one back as a download for that chat only', async () => {
    const { bed, hob, model } = await started(new ScriptedModel([{ toolCalls: [{ name: 'send_file', input: { path: 'report.txt', caption: 'Your report' } }] }, { text: 'Sent it.' }]));
    writeFileSync(join(hob.dir, 'workspace', 'report.txt'), 'all green\n');
    const ann = await bed.page(OWNER);
    const bob = await bed.page(FRIEND);
    const upload = await ann.upload('notes.txt', Buffer.from('buy milk\n'), 'text/plain');
    await ann.say('here are my notes', { attachments: [upload] });
    const sent = await ann.waitFor(() => ann.botMessages().find((message) => message.file), 'the file message');
    expect(sent.text).toBe('Your report');
    expect(sent.file?.name).toBe('report.txt');

    const inbox = readdirSync(join(hob.dir, 'workspace', 'inbox'));
    expect(inbox).toHaveLength(1);
    expect(readFileSync(join(hob.dir, 'workspace', 'inbox', inbox[0] as string), 'utf8')).toBe('buy milk\n');
    expect(JSON.stringify(model.requests[0]?.messages)).toContain(`[The person sent a document: inbox/${inbox[0]}`);

    const mine = await ann.get(sent.file?.url as string);
    expect(mine.status).toBe(200);
    expect(mine.headers.get('content-disposition')).toContain('attachment; filename="report.txt"');
    expect(await mine.text()).toBe('all green\n');
    expect((await bob.get(sent.file?.url as string)).status).toBe(404);
    // Bob cannot attach Ann's upload to his own message either.
    expect((await bob.say('mine now', { attachments: [upload] })).status).toBe(400);
  });

  it('a visitor asks for access, gets a pairing code, and the owner approves them with a button', async () => {
    const { bed } = await started(new ScriptedModel([{ text: 'Welcome, Carol!' }]));
    const ann = await bed.page(OWNER);
    const carol = new WebPageClient(bed.adapter.url, bed.waiters);
    expect((await carol.askForAccess('Carol')).status).toBe(200);
    await carol.open();
    expect(carol.me?.id).toMatch(/^v-[a-z2-9]{8}$/);
    const code = await carol.waitFor(() => /pairing code is ([A-Z0-9]{8})/.exec(carol.botMessages().map((message) => message.text).join('\n'))?.[1], 'the pairing code');
    const request = await textOf(ann, code);
    expect(request.text).toContain(`Carol (id ${carol.me?.id}) wants to talk to hob`);
    await ann.press(request.id, request.buttons[0]?.data as string);
    await textOf(carol, "You're approved");
    await carol.say('hello');
    await textOf(carol, 'Welcome, Carol!');
  });

  it('a retried message (same nonce) is taken once; a message too long is refused in words', async () => {
    const { bed, model } = await started(new ScriptedModel([{ text: 'Got it once.' }]));
    const ann = await bed.page(OWNER);
    const [first, again] = [await ann.say('only once', { nonce: 'n-1' }), await ann.say('only once', { nonce: 'n-1' })];
    expect([first.status, again.status]).toEqual([202, 202]);
    await textOf(ann, 'Got it once.');
    expect(ann.messages.filter((message) => message.from === 'me')).toHaveLength(1);
    expect(model.requests).toHaveLength(1);
    const long = await ann.say('x'.repeat(32_001));
    expect(long.status).toBe(413);
    expect(((await long.json()) as { error: string }).error).toBe('Your message is 32,001 characters; the limit is 32,000. Send it as a file instead.');
  });

  it("shows each page its menu: the owner's has the owner's commands, a friend's does not", async () => {
    const { bed } = await started(new ScriptedModel([]));
    const ann = await bed.page(OWNER);
    const bob = await bed.page(FRIEND);
    const names = (page: WebPageClient) => page.commands.map((entry) => entry.command);
    expect(names(ann)).toEqual(expect.arrayContaining(['new', 'stop', 'sessions', 'resume', 'model', 'pairing']));
    expect(names(bob)).toEqual(expect.arrayContaining(['new', 'stop', 'sessions', 'resume']));
    expect(names(bob)).not.toContain('pairing');
  });

  it("/web in an owner's direct chat on another platform answers with a link that signs in as the owner; a friend and a group get none; only owners' menus list it", async () => {
    bed = await webBed();
    const memory = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'Hi Ann, on the web now.' }]);
    hob = await startTestGateway(bed.adapter, model, {
      adapters: [bed.adapter, memory],
      access: new Map([
        ['web', { allowFrom: [OWNER.id, FRIEND.id], allowedGroups: [] }],
        ['memory', { allowFrom: [OWNER.id, FRIEND.id], allowedGroups: ['team'] }],
      ]),
      channelCommands: webChannel.chatCommands?.(bed.config, { dataDir: bed.dataDir }),
    });
    const said = (chatId: string, text: string) => memory.waitFor(() => memory.chat(chatId).find((message) => message.text.includes(text)), 5000, `"${text}" in ${chatId}`);
    memory.say(OWNER, '/web');
    const reply = (await said(`dm-${OWNER.id}`, 'Sign-in link')).text;
    expect(reply).toMatch(/^Sign-in link for 100, valid once, for 10 minutes:\nhttp:\/\/127\.0\.0\.1:\d+\/#code=[\w-]{24}\n/);
    const page = new WebPageClient(bed.adapter.url, bed.waiters);
    expect((await page.signIn(/http:\S+/.exec(reply)?.[0] as string)).status).toBe(200);
    await page.open();
    await page.say('hello from the browser');
    await textOf(page, 'Hi Ann, on the web now.');

    memory.say(FRIEND, '/web');
    await said(`dm-${FRIEND.id}`, '/web is only for the owner of this hob.');
    memory.say(OWNER, '/web', { chatId: 'team', chatType: 'group', mention: true });
    await said('team', '/web answers only in a private chat: send it to me there.');
    expect(memory.chat('team').some((message) => message.text.includes('#code='))).toBe(false);
    // Only the browser's message reached the model.
    expect(model.requests).toHaveLength(1);
    const bob = await bed.page(FRIEND);
    expect(page.commands.map((entry) => entry.command)).toContain('web');
    expect(bob.commands.map((entry) => entry.command)).not.toContain('web');
  });
});
