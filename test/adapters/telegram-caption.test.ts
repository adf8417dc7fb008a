import '../support/env.js';
import { adapter, fake, logs, useTelegramTestbed } from '../support/telegram-testbed.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedCall, VisibleMessage } from '../fakes/telegram/index.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

/**
 * A message hob sent as a file (a long approval prompt, a file the model sends) is a Telegram
 * document: its text is a caption, and changing that text later must edit the caption.
 */

useTelegramTestbed();

const parseRefusal = { code: 400, description: 'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 0' };
const approvalButtons = [[{ label: 'Allow once', data: 'ap:a1:o' }, { label: 'Deny', data: 'ap:a1:d' }]];
/** Bytes that are not valid UTF-8, so a lossy text round trip would show. */
const binary = Buffer.from([0x00, 0xff, 0xfe, 0x41, 0x0a, 0x80, 0x42]);

function buttonLabels(message: VisibleMessage | undefined): string[] {
  const rows = (message?.replyMarkup as { inline_keyboard?: { text: string }[][] } | undefined)?.inline_keyboard ?? [];
  return rows.flat().map((button) => button.text);
}

function statuses(calls: RecordedCall[]): (number | undefined)[] {
  return calls.map((call) => call.response?.status);
}

describe('Telegram adapter: a file is a document whose text is its caption', () => {
  it('sends a short text as the caption of a document that carries the file, byte for byte', async () => {
    const ref = await adapter().send({ chatId: '42' }, {
      text: 'Run **this** command?',
      file: { name: 'approval-a1.txt', data: binary, caption: 'Full input for approval a1' },
      buttons: approvalButtons,
    });

    const shown = fake.chat(42);
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatchObject({
      messageId: Number(ref.messageId),
      kind: 'document',
      text: 'Run this command?',
      entities: [{ type: 'bold', offset: 4, length: 4 }],
    });
    expect(shown[0]?.file?.fileName).toBe('approval-a1.txt');
    expect(shown[0]?.file?.bytes.equals(binary)).toBe(true);
    expect(buttonLabels(shown[0])).toEqual(['Allow once', 'Deny']);
    expect(fake.callsOf('sendDocument')[0]?.files.map((file) => file.fileName)).toEqual(['approval-a1.txt']);
    expect(fake.callsOf('sendMessage')).toEqual([]);
  });

  it('uses the file caption when the message text is empty', async () => {
    await adapter().send({ chatId: '42' }, { text: '  ', file: { name: 'notes.txt', data: Buffer.from('n'), caption: 'Your **notes**' } });
    expect(fake.chat(42)).toMatchObject([{ kind: 'document', text: 'Your notes' }]);
  });

  it('edits the caption of a document: the person reads the new text under the same file, without the buttons', async () => {
    const telegram = adapter();
    const ref = await telegram.send({ chatId: '42' }, { text: 'Run **this** command?', file: { name: 'approval-a1.txt', data: binary }, buttons: approvalButtons });

    await telegram.edit(ref, { text: '✅ **bash**: allowed once by Ann.\n(input attached as approval-a1.txt)' });

    const shown = fake.chat(42);
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatchObject({
      messageId: Number(ref.messageId),
      kind: 'document',
      text: '✅ bash: allowed once by Ann.\n(input attached as approval-a1.txt)',
      entities: [{ type: 'bold', offset: 2, length: 4 }],
      edits: 1,
    });
    expect(shown[0]?.replyMarkup).toBeUndefined();
    expect(shown[0]?.file?.bytes.equals(binary)).toBe(true);
    expect(fake.callsOf('editMessageCaption').map((call) => ({ status: call.response?.status, parseMode: call.body.parse_mode }))).toEqual([
      { status: 200, parseMode: 'HTML' },
    ]);
    // The ref knows it names a document, so hob goes straight to the caption; nothing is sent anew.
    expect(ref.isFile).toBe(true);
    expect(fake.callsOf('editMessageText')).toEqual([]);
    expect(fake.callsOf('sendMessage')).toEqual([]);
    expect(fake.callsOf('sendDocument')).toHaveLength(1);
  });

  it('keeps buttons given again in a caption edit, and accepts an edit that changes nothing', async () => {
    const telegram = adapter();
    const ref = await telegram.send({ chatId: '42' }, { text: 'Step 1 of 2', file: { name: 'log.txt', data: Buffer.from('log') } });
    const next = { text: 'Step 2 of 2', buttons: [[{ label: 'Stop', data: 'stop' }]] };

    await telegram.edit(ref, next);
    await expect(telegram.edit(ref, next)).resolves.toBeUndefined();

    expect(fake.chat(42)).toMatchObject([{ kind: 'document', text: 'Step 2 of 2', edits: 1 }]);
    expect(buttonLabels(fake.chat(42)[0])).toEqual(['Stop']);
  });

  it('edits a caption to a text too long for a caption as its head, marked with …', async () => {
    const telegram = adapter();
    const ref = await telegram.send({ chatId: '42' }, { text: 'Working…', file: { name: 'out.txt', data: Buffer.from('out') } });
    const text = Array.from({ length: 60 }, (_, i) => `Line ${i}: **done** ${'and then '.repeat(4).trim()}`).join('\n');
    expect(text.length).toBeGreaterThan(2000);

    await telegram.edit(ref, { text });

    const [shown] = fake.chat(42);
    expect(shown?.kind).toBe('document');
    expect(shown?.text.length).toBeLessThanOrEqual(1024);
    expect(shown?.text.startsWith('Line 0: done and then')).toBe(true);
    expect(shown?.text.endsWith('…')).toBe(true);
  });

  it('edits a text message with editMessageText alone, never as a caption', async () => {
    const telegram = adapter();
    const ref = await telegram.send({ chatId: '42' }, { text: 'Thinking…' });
    await telegram.edit(ref, { text: 'Done.' });

    expect(fake.chat(42)).toMatchObject([{ kind: 'text', text: 'Done.', edits: 1 }]);
    expect(fake.callsOf('editMessageCaption')).toEqual([]);
  });
});

describe('Telegram adapter: a caption Telegram cannot parse is shown as plain text', () => {
  it('resends the document once with a plain caption, file and buttons intact', async () => {
    fake.failNext('sendDocument', parseRefusal);
    const ref = await adapter().send({ chatId: '42' }, {
      text: 'Use **care** with `rm`',
      file: { name: 'approval-a1.txt', data: binary },
      buttons: approvalButtons,
    });

    const shown = fake.chat(42);
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatchObject({ messageId: Number(ref.messageId), kind: 'document', text: 'Use care with rm', entities: [] });
    expect(shown[0]?.parseMode).toBeUndefined();
    expect(shown[0]?.file?.bytes.equals(binary)).toBe(true);
    expect(buttonLabels(shown[0])).toEqual(['Allow once', 'Deny']);
    expect(statuses(fake.callsOf('sendDocument'))).toEqual([400, 200]);
    expect(fake.callsOf('sendDocument')[1]?.files.map((file) => file.bytes.equals(binary))).toEqual([true]);
    expect(logs).toContainEqual(expect.objectContaining({ level: 'warn', fields: expect.objectContaining({ method: 'sendDocument' }) }));
  });

  it('edits the caption as plain text when Telegram refuses the HTML caption', async () => {
    const telegram = adapter();
    const ref = await telegram.send({ chatId: '42' }, { text: 'Run it?', file: { name: 'approval-a1.txt', data: binary }, buttons: approvalButtons });
    fake.failNext('editMessageCaption', parseRefusal);

    await telegram.edit(ref, { text: '❌ **bash**: denied by Ann.\n(input attached as approval-a1.txt)' });

    const [shown] = fake.chat(42);
    expect(shown).toMatchObject({ kind: 'document', text: '❌ bash: denied by Ann.\n(input attached as approval-a1.txt)', entities: [], edits: 1 });
    expect(shown?.parseMode).toBeUndefined();
    expect(shown?.replyMarkup).toBeUndefined();
    expect(statuses(fake.callsOf('editMessageCaption'))).toEqual([400, 200]);
    expect(fake.callsOf('editMessageCaption')[1]?.body.parse_mode).toBeUndefined();
  });

  it('reaches the caption through a ref that does not know it names a document, even when Telegram refuses the HTML first', async () => {
    const telegram = adapter();
    const sent = await telegram.send({ chatId: '42' }, { text: 'Run it?', file: { name: 'approval-a1.txt', data: binary }, buttons: approvalButtons });
    const ref = { chatId: sent.chatId, messageId: sent.messageId }; // as rebuilt from a stored message id
    // Telegram parses the markup before it looks at the message, so both edit methods refuse the HTML.
    fake.failNext('editMessageText', parseRefusal);
    fake.failNext('editMessageCaption', parseRefusal);

    await telegram.edit(ref, { text: '✅ **bash**: allowed once by Ann.' });

    expect(fake.chat(42)).toMatchObject([{ kind: 'document', text: '✅ bash: allowed once by Ann.', entities: [], edits: 1 }]);
    expect(fake.chat(42)[0]?.replyMarkup).toBeUndefined();
  });
});

describe('Telegram adapter: a text too long for a caption', () => {
  it('sends the text as a message first, then the document with its own caption and the buttons', async () => {
    const text = 'Long **explanation**. '.repeat(60);
    expect(text.length).toBeGreaterThan(1024);
    const ref = await adapter().send({ chatId: '42' }, {
      text,
      file: { name: 'report.md', data: Buffer.from('# Report'), caption: 'The report' },
      buttons: approvalButtons,
    });

    const shown = fake.chat(42);
    expect(shown.map((message) => message.kind)).toEqual(['text', 'document']);
    expect(shown[0]?.text).toBe('Long explanation. '.repeat(60).trim());
    expect(shown[0]?.replyMarkup).toBeUndefined();
    expect(shown[1]).toMatchObject({ messageId: Number(ref.messageId), text: 'The report' });
    expect(shown[1]?.file?.bytes.toString()).toBe('# Report');
    expect(buttonLabels(shown[1])).toEqual(['Allow once', 'Deny']);
  });

  it('sends a document with no caption when the file has none, and every word of a very long text before it', async () => {
    const text = Array.from({ length: 80 }, (_, i) => `Paragraph ${i}: ${'word '.repeat(12).trim()}`).join('\n\n');
    expect(text.length).toBeGreaterThan(4096);
    const ref = await adapter().send({ chatId: '42' }, { text, file: { name: 'data.bin', data: binary } });

    const shown = fake.chat(42);
    expect(shown.length).toBeGreaterThan(2);
    expect(shown.slice(0, -1).every((message) => message.kind === 'text' && message.text.length <= 4096)).toBe(true);
    expect(shown.slice(0, -1).map((message) => message.text).join('\n\n')).toBe(text);
    expect(shown.at(-1)).toMatchObject({ messageId: Number(ref.messageId), kind: 'document', text: '' });
    expect(shown.at(-1)?.file?.bytes.equals(binary)).toBe(true);
  });

  it('shortens a file caption too long for Telegram (marked …) instead of dropping it', async () => {
    const text = 'Long explanation. '.repeat(80);
    const caption = `Summary: ${'all checks passed, '.repeat(80)}`;
    expect(caption.length).toBeGreaterThan(1024);
    await adapter().send({ chatId: '42' }, { text, file: { name: 'report.md', data: Buffer.from('# Report'), caption } });

    const document = fake.chat(42).at(-1);
    expect(document?.kind).toBe('document');
    expect(document?.text.startsWith('Summary: all checks passed,')).toBe(true);
    expect(document?.text.endsWith('…')).toBe(true);
    expect(document?.text.length).toBeLessThanOrEqual(1024);
  });

  it('edits the document that followed the long text, and leaves the text as it was', async () => {
    const telegram = adapter();
    const text = 'Long explanation. '.repeat(80);
    const ref = await telegram.send({ chatId: '42' }, { text, file: { name: 'report.md', data: Buffer.from('# Report'), caption: 'The report' }, buttons: approvalButtons });

    await telegram.edit(ref, { text: 'Report **approved**.' });

    const shown = fake.chat(42);
    expect(shown).toMatchObject([
      { kind: 'text', text: text.trim(), edits: 0 },
      { messageId: Number(ref.messageId), kind: 'document', text: 'Report approved.', edits: 1 },
    ]);
    expect(shown[1]?.replyMarkup).toBeUndefined();
  });
});

describe('Telegram through the gateway: a long command to approve arrives as a document', () => {
  let hob: TestGateway | undefined;

  afterEach(async () => {
    await hob?.close();
    hob = undefined;
  });

  it('shows the full command as a file with buttons, and after Allow the caption tells the outcome and who decided', async () => {
    const payload = Array.from({ length: 400 }, (_, i) => `chunk${String(i).padStart(3, '0')}`).join('-');
    const command = `echo ${payload} > approved.txt`;
    expect(command.length).toBeGreaterThan(3000);
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command } }] }, { text: 'Wrote approved.txt.' }]);
    const telegram = adapter();
    hob = await startTestGateway(telegram, model);
    const ann = { id: Number(OWNER.id), first_name: OWNER.name };
    const annChat = { id: Number(OWNER.id), type: 'private' as const };

    fake.sendText(ann, annChat, 'write the file');
    const prompt = await fake.waitFor(() => fake.chat(annChat.id).find((message) => message.kind === 'document'), 8000, 'the approval document');

    const id = /approval-(a[0-9a-f]+)\.txt/.exec(prompt.file?.fileName ?? '')?.[1];
    expect(id).toBeDefined();
    expect(prompt.file?.bytes.toString()).toBe(command);
    expect(prompt.text).toContain('Allow bash?');
    expect(prompt.text).toContain(`The full command (${command.length} characters) is attached as approval-${id}.txt.`);
    expect(prompt.text).toContain('Asked by Ann');
    expect(buttonLabels(prompt)).toEqual(['Allow once', 'Always allow', 'Deny']);
    expect(fake.chat(annChat.id).some((message) => message.text.includes(payload))).toBe(false);

    const queryId = fake.pressButton(ann, annChat, prompt.messageId, `ap:${id}:o`);
    await fake.waitFor(() => fake.chat(annChat.id).find((message) => message.text.includes('Wrote approved.txt.')), 8000, 'the answer after approval');

    const decided = fake.chat(annChat.id).find((message) => message.messageId === prompt.messageId);
    expect(decided).toMatchObject({ kind: 'document', text: `✅ bash: allowed once by Ann.\n(input attached as approval-${id}.txt)` });
    expect(decided?.replyMarkup).toBeUndefined();
    expect(decided?.file?.bytes.toString()).toBe(command);
    expect(fake.answeredCallbacks).toContainEqual({ id: queryId, text: 'Allowed once.' });
    const written = join(hob.dir, 'workspace', 'approved.txt');
    expect(existsSync(written)).toBe(true);
    expect(readFileSync(written, 'utf8').trim()).toBe(payload);
  });
});
