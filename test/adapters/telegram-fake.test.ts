import '../support/env.js';
import { autoRetry } from '@grammyjs/auto-retry';
import { run, type RunnerHandle } from '@grammyjs/runner';
import { Bot, GrammyError, InputFile } from 'grammy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseTelegramHtml, startFakeTelegram, TINY_PNG, type FakeTelegram } from '../fakes/telegram/index.js';

const ann = { id: 42, first_name: 'Ann', username: 'ann' };
const annChat = { id: 42, type: 'private' as const };
const team = { id: -1001234567890, type: 'supergroup' as const, title: 'Team' };

let fake: FakeTelegram;
let bot: Bot;
let runner: RunnerHandle | undefined;
let handlerErrors: unknown[];

beforeEach(async () => {
  fake = await startFakeTelegram({ botUsername: 'hob_test_bot' });
  bot = new Bot(fake.token, { client: { apiRoot: fake.apiRoot } });
  bot.api.config.use(autoRetry({ maxRetryAttempts: 3, maxDelaySeconds: 5 }));
  handlerErrors = [];
  bot.catch((error) => void handlerErrors.push(error.error));
});

afterEach(async () => {
  if (runner?.isRunning()) await runner.stop();
  runner = undefined;
  await fake.close();
});

function startPolling(): void {
  runner = run(bot);
}

describe('fake Telegram Bot API driven by the real grammy client', () => {
  it('delivers a text a person sends and shows the bot reply in their chat', async () => {
    bot.on('message:text', (ctx) => ctx.reply(`echo: ${ctx.message.text}`));
    startPolling();

    fake.sendText(ann, annChat, 'hello there');

    const [reply] = await fake.waitFor(() => fake.chat(42).length === 1 && fake.chat(42));
    expect(reply?.text).toBe('echo: hello there');
    expect(fake.callsOf('sendMessage')[0]?.body).toMatchObject({ chat_id: 42, text: 'echo: hello there' });
    expect(handlerErrors).toEqual([]);
  });

  it('hands an update injected during a held long poll to that same poll', async () => {
    bot.on('message:text', (ctx) => ctx.reply('awake'));
    startPolling();
    const heldPoll = await fake.waitForCall('getUpdates', (call) => call.response === undefined);

    fake.sendText(ann, annChat, 'wake up');
    await fake.waitFor(() => fake.chat(42).length === 1);

    // The poll that was parked before the injection is the one that carried the update.
    const delivered = heldPoll.response?.result as { message: { text: string } }[];
    expect(delivered.map((update) => update.message.text)).toEqual(['wake up']);
  });

  it('answers a pressed button and shows the edited message without its keyboard', async () => {
    const asked = await bot.api.sendMessage(42, 'Run <code>rm -rf build</code>?', {
      parse_mode: 'HTML',
      reply_markup: { inline_keyboard: [[{ text: 'Allow', callback_data: 'allow:1' }, { text: 'Deny', callback_data: 'deny:1' }]] },
    });
    bot.on('callback_query:data', async (ctx) => {
      await ctx.answerCallbackQuery({ text: 'Allowed' });
      await ctx.editMessageText('Allowed: rm -rf build');
    });
    startPolling();

    const queryId = fake.pressButton(ann, annChat, asked.message_id, 'allow:1');

    await fake.waitFor(() => fake.chat(42)[0]?.edits === 1);
    expect(fake.answeredCallbacks).toEqual([{ id: queryId, text: 'Allowed' }]);
    const [message] = fake.chat(42);
    expect(message?.text).toBe('Allowed: rm -rf build');
    expect(message?.replyMarkup).toBeUndefined();
    expect(() => fake.pressButton(ann, annChat, asked.message_id, 'allow:1')).toThrow(/shows no button/);
  });

  it('retries a 429 through auto-retry so the message arrives exactly once', async () => {
    fake.failNext('sendMessage', { retryAfter: 1 });

    await bot.api.sendMessage(42, 'after the rate limit');

    const attempts = fake.callsOf('sendMessage').map((call) => call.response);
    expect(attempts[0]).toMatchObject({ status: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } });
    expect(attempts[1]).toMatchObject({ status: 200, ok: true });
    expect(fake.chat(42).map((message) => message.text)).toEqual(['after the rate limit']);
  });

  it('refuses HTML Telegram cannot parse with a GrammyError and shows nothing', async () => {
    const unclosed = bot.api.sendMessage(42, '<b>bold', { parse_mode: 'HTML' });
    await expect(unclosed).rejects.toBeInstanceOf(GrammyError);
    await expect(unclosed).rejects.toMatchObject({
      error_code: 400,
      description: 'Bad Request: can\'t parse entities: Can\'t find end tag corresponding to start tag "b"',
    });
    await expect(bot.api.sendMessage(42, 'a < b', { parse_mode: 'HTML' })).rejects.toMatchObject({
      description: 'Bad Request: can\'t parse entities: Unsupported start tag "" at byte offset 2',
    });
    await expect(bot.api.sendMessage(42, 'привет <br>', { parse_mode: 'HTML' })).rejects.toMatchObject({
      description: 'Bad Request: can\'t parse entities: Unsupported start tag "br" at byte offset 13',
    });
    expect(fake.chat(42)).toEqual([]);

    await bot.api.sendMessage(42, '<b>Tom</b> &amp; <i>Jerry</i> & co', { parse_mode: 'HTML' });
    expect(fake.chat(42)[0]).toMatchObject({
      text: 'Tom & Jerry & co',
      entities: [{ type: 'bold', offset: 0, length: 3 }, { type: 'italic', offset: 6, length: 5 }],
    });
  });

  it('refuses a message longer than 4096 characters and accepts one of exactly 4096', async () => {
    await expect(bot.api.sendMessage(42, 'x'.repeat(4097))).rejects.toMatchObject({
      error_code: 400,
      description: 'Bad Request: message is too long',
    });
    await bot.api.sendMessage(42, 'x'.repeat(4096));
    expect(fake.chat(42)).toHaveLength(1);
  });

  it('refuses callback_data longer than 64 bytes', async () => {
    const reply_markup = { inline_keyboard: [[{ text: 'Go', callback_data: 'é'.repeat(33) }]] };
    await expect(bot.api.sendMessage(42, 'choose', { reply_markup })).rejects.toMatchObject({
      description: 'Bad Request: BUTTON_DATA_INVALID',
    });
  });

  it('refuses an edit to identical content as not modified and an edit of an unknown message', async () => {
    const sent = await bot.api.sendMessage(42, 'Thinking…');
    await bot.api.editMessageText(42, sent.message_id, 'Done.');

    await expect(bot.api.editMessageText(42, sent.message_id, 'Done.')).rejects.toMatchObject({
      description:
        'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
    });
    await expect(bot.api.editMessageText(42, 999, 'x')).rejects.toMatchObject({ description: 'Bad Request: message to edit not found' });
    expect(fake.chat(42)).toMatchObject([{ text: 'Done.', edits: 1, deleted: false }]);

    await bot.api.deleteMessage(42, sent.message_id);
    expect(fake.chat(42)).toMatchObject([{ deleted: true }]);
    await expect(bot.api.editMessageText(42, sent.message_id, 'again')).rejects.toMatchObject({
      description: 'Bad Request: message to edit not found',
    });
  });

  it('records a multipart document upload with its file name and serves it back through getFile', async () => {
    const sent = await bot.api.sendDocument(42, new InputFile(Buffer.from('weekly numbers'), 'report.txt'), { caption: 'Your report' });

    const upload = fake.callsOf('sendDocument')[0];
    expect(upload?.files).toMatchObject([{ fileName: 'report.txt', size: 14 }]);
    expect(upload?.body).toMatchObject({ chat_id: '42', caption: 'Your report' });
    expect(sent.document).toMatchObject({ file_name: 'report.txt', mime_type: 'text/plain', file_size: 14 });
    expect(fake.chat(42)[0]).toMatchObject({ kind: 'document', text: 'Your report' });

    const file = await bot.api.getFile(sent.document.file_id);
    const download = await fetch(`${fake.apiRoot}/file/bot${fake.token}/${file.file_path}`);
    expect(Buffer.from(await download.arrayBuffer()).toString()).toBe('weekly numbers');
  });

  it('lets the bot download a photo a person sent, byte for byte', async () => {
    const received: Buffer[] = [];
    bot.on('message:photo', async (ctx) => {
      const file = await ctx.getFile();
      const response = await fetch(`${fake.apiRoot}/file/bot${fake.token}/${file.file_path}`);
      received.push(Buffer.from(await response.arrayBuffer()));
      await ctx.reply(`got: ${ctx.message.caption}`);
    });
    startPolling();

    fake.sendPhoto(ann, annChat, TINY_PNG, 'my cat');

    await fake.waitFor(() => fake.chat(42).length === 1);
    expect(received).toHaveLength(1);
    expect(received[0]?.equals(TINY_PNG)).toBe(true);
    expect(fake.chat(42)[0]?.text).toBe('got: my cat');
  });

  it('marks commands and mentions in group messages so grammy routes them', async () => {
    const seen: string[] = [];
    bot.command('ask', (ctx) => void seen.push(`command:${ctx.match}`));
    bot.on('message::mention', (ctx) => void seen.push(`mention:${ctx.message.text}`));
    startPolling();

    fake.sendText(ann, team, '/ask@hob_test_bot what time is it');
    fake.sendText(ann, team, 'hey @hob_test_bot ping', { message_thread_id: 7, is_topic_message: true });

    await fake.waitFor(() => seen.length === 2);
    expect(seen).toEqual(['command:what time is it', 'mention:hey @hob_test_bot ping']);
  });

  it('does not deliver a message again after the bot stops and a new one starts polling', async () => {
    const answered: string[] = [];
    const first = new Bot(fake.token, { client: { apiRoot: fake.apiRoot } });
    first.on('message:text', (ctx) => void answered.push(`first:${ctx.message.text}`));
    const firstRun = first.start();
    fake.sendText(ann, annChat, 'one');
    await fake.waitFor(() => answered.length === 1);
    await first.stop(); // confirms the offset with getUpdates { offset, limit: 1 }
    await firstRun;

    bot.on('message:text', (ctx) => void answered.push(`second:${ctx.message.text}`));
    startPolling();
    fake.sendText(ann, annChat, 'two');

    await fake.waitFor(() => answered.length === 2);
    expect(answered).toEqual(['first:one', 'second:two']);
    expect(fake.callsOf('getUpdates').filter((call) => call.response?.status === 409)).toEqual([]);
  });

  it('terminates a held poll with 409 when a second bot instance polls the same token', async () => {
    const held = expect(bot.api.getUpdates({ timeout: 30 })).rejects.toMatchObject({
      error_code: 409,
      description: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
    });
    await fake.waitForCall('getUpdates', (call) => call.response === undefined);

    const other = new Bot(fake.token, { client: { apiRoot: fake.apiRoot } });
    await expect(other.api.getUpdates({ timeout: 0 })).resolves.toEqual([]);
    await held;
  });

  it('keeps a command list per scope and shows a chat the narrowest one that is set', async () => {
    fake.sendText(ann, annChat, 'hi');
    await bot.api.setMyCommands([{ command: 'status', description: 'Status' }]);
    await bot.api.setMyCommands([{ command: 'help', description: 'Help' }], { scope: { type: 'all_group_chats' } });
    await bot.api.raw.setMyCommands({ commands: [{ command: 'restart', description: 'Restart' }], scope: { chat_id: 42, type: 'chat' } as { type: 'chat'; chat_id: number } });

    expect(fake.commandMenu(42).map((command) => command.command)).toEqual(['restart']);
    expect(fake.commandMenu(43).map((command) => command.command)).toEqual(['status']);
    expect(fake.commandMenu(team.id).map((command) => command.command)).toEqual(['help']);
    await expect(bot.api.getMyCommands({ scope: { type: 'chat', chat_id: 42 } })).resolves.toEqual([{ command: 'restart', description: 'Restart' }]);
    await expect(bot.api.setMyCommands([], { scope: { type: 'chat', chat_id: 777 } })).rejects.toMatchObject({ description: 'Bad Request: chat not found' });

    await bot.api.setMyCommands([], { scope: { type: 'chat', chat_id: 42 } });
    expect(fake.commandMenu(42).map((command) => command.command)).toEqual(['status']);
  });

  it('shows a bot message or document sent as a reply as one, and drops a reply to a missing message only when allowed', async () => {
    const asked = fake.sendText(ann, annChat, 'the report please');
    await bot.api.sendMessage(42, 'coming', { reply_parameters: { message_id: asked } });
    await bot.api.sendDocument(42, new InputFile(Buffer.from('r'), 'r.txt'), { reply_parameters: { message_id: asked } });
    await bot.api.sendMessage(42, 'anyway', { reply_parameters: { message_id: 999, allow_sending_without_reply: true } });
    await expect(bot.api.sendMessage(42, 'lost', { reply_parameters: { message_id: 999 } })).rejects.toMatchObject({
      description: 'Bad Request: message to be replied not found',
    });

    expect(fake.chat(42).map(({ text, replyToMessageId }) => ({ text, replyToMessageId }))).toEqual([
      { text: 'coming', replyToMessageId: asked },
      { text: '', replyToMessageId: asked },
      { text: 'anyway', replyToMessageId: undefined },
    ]);
  });

  it('answers a wrong token with 401 and an unknown method with 404', async () => {
    const stranger = new Bot('1:wrong', { client: { apiRoot: fake.apiRoot } });
    await expect(stranger.api.getMe()).rejects.toMatchObject({ error_code: 401, description: 'Unauthorized' });
    await expect(bot.api.raw.getMe()).resolves.toMatchObject({ username: 'hob_test_bot', is_bot: true });
    const raw = bot.api.raw as unknown as Record<string, () => Promise<unknown>>;
    await expect(raw.noSuchMethod?.()).rejects.toMatchObject({ error_code: 404, description: 'Not Found' });
  });
});

describe('Telegram HTML parse mode as the fake applies it', () => {
  it.each([
    ['<br>', 'Unsupported start tag "br" at byte offset 0'],
    ['x <b', 'Unclosed start tag at byte offset 2'],
    ['<a href', 'Unclosed start tag "a" at byte offset 0'],
    ['<a href=x/>y</a>', 'Unexpected end of name token at byte offset 8'],
    ['<span>x</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 0'],
    ['x</b>', 'Unexpected end tag at byte offset 1'],
    ['<b>x</b', 'Unclosed end tag at byte offset 4'],
    ['<b>x</i>', 'Unmatched end tag at byte offset 4, expected "</b>", found "</i>"'],
  ])('refuses %j with Telegram\'s wording', (html, error) => {
    expect(parseTelegramHtml(html)).toEqual({ ok: false, error });
  });

  it('reads the supported tags into the entities Telegram would return', () => {
    const parsed = parseTelegramHtml(
      '<pre><code class="language-ts">let x = 1;</code></pre>\n<a href="https://e.com/?a=1&amp;b=2">link</a> ' +
        '<tg-spoiler>s</tg-spoiler><span class="tg-spoiler">t</span><blockquote expandable>q</blockquote> &lt;&#65;&nbsp;',
    );
    expect(parsed).toEqual({
      ok: true,
      text: 'let x = 1;\nlink stq <A&nbsp;',
      entities: [
        { type: 'pre', offset: 0, length: 10, language: 'ts' },
        { type: 'text_link', offset: 11, length: 4, url: 'https://e.com/?a=1&b=2' },
        { type: 'spoiler', offset: 16, length: 1 },
        { type: 'spoiler', offset: 17, length: 1 },
        { type: 'expandable_blockquote', offset: 18, length: 1 },
      ],
    });
  });
});
