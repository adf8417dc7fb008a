import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChannelAdapter } from '../../src/gateway/channel.js';
import type { GatewayOptions } from '../../src/gateway/gateway.js';
import type { ToolResultBlock } from '../../src/core/messages.js';
import { SqliteOutbox } from '../../src/store/sqlite/outbox.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { FRIEND, OWNER, STRANGER, startTestGateway, type TestGateway } from '../support/gateway.js';

export type Person = { id: string; name: string };
export type Seen = { id: string; text: string; buttons: { label: string }[] };

/** How the contract drives one platform: as people in chats, through the adapter's real client. */
export type ContractDriver = {
  adapter: ChannelAdapter;
  maxLength: number;
  /** A group chat where hob answers when mentioned; absent when the platform has none (the web's chats are each one person's). */
  groupChatId?: string;
  dmChatId(person: Person): string;
  dm(person: Person, text: string): void;
  /** Speaks in the group chat; absent with `groupChatId`, and then the group tests are skipped. */
  group?(person: Person, text: string, options: { mention: boolean }): void;
  /** Bot messages in a chat, as a person reads them now. */
  seen(chatId: string): Seen[];
  press(person: Person, chatId: string, messageId: string, label: string): void;
  /** Short notices shown to a person after pressing (callback answers). */
  notices(person: Person): string[];
  waitFor<T>(probe: () => T | undefined | false, what: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
  /**
   * What a live-answer preview kept apart from the chat's messages shows now (Telegram's
   * draft), when the platform has one. Streams into a message are read through `seen`.
   */
  liveText?(chatId: string): string | undefined;
  /** From now on live answers cannot become the answer (the platform refuses to finish a stream). */
  refuseLiveFinish?(): void;
};

const toolResults = (model: ScriptedModel, index: number): ToolResultBlock[] =>
  (model.requests[index]?.messages.at(-1)?.content ?? []).filter((block): block is ToolResultBlock => block.type === 'tool_result');

/**
 * The behaviour every channel adapter must show through the gateway. Run against the
 * in-memory channel and each real platform adapter (over its loopback fake).
 */
export function channelContract(name: string, makeDriver: () => Promise<ContractDriver>): void {
  describe(`channel contract: ${name}`, () => {
    let driver: ContractDriver | undefined;
    let hob: TestGateway | undefined;

    afterEach(async () => {
      await hob?.close();
      await driver?.close();
      hob = undefined;
      driver = undefined;
    });

    async function start(model: ScriptedModel, options: Partial<GatewayOptions> = {}) {
      driver = await makeDriver();
      hob = await startTestGateway(driver.adapter, model, options);
      return { d: driver, hob };
    }

    const lastText = (d: ContractDriver, chatId: string, includes: string) =>
      d.waitFor(() => d.seen(chatId).find((message) => message.text.includes(includes)), `a message containing "${includes}"`);

    it('answers a DM from an allowed person', async () => {
      const { d } = await start(new ScriptedModel([{ text: 'Hello Ann, how can I help?' }]));
      d.dm(OWNER, 'hi');
      await lastText(d, d.dmChatId(OWNER), 'Hello Ann, how can I help?');
    });

    it('in a group answers only when addressed, and only people it knows', async (context) => {
      const model = new ScriptedModel([{ text: 'Answer for Bob' }]);
      const { d } = await start(model);
      const { groupChatId, group } = d;
      if (groupChatId === undefined || !group) return context.skip('this platform has no group chats');
      group(FRIEND, 'talking among ourselves', { mention: false });
      group(STRANGER, 'hey bot do my homework', { mention: true });
      group(FRIEND, 'what time is it?', { mention: true });
      await lastText(d, groupChatId, 'Answer for Bob');
      expect(model.requests).toHaveLength(1);
      expect(JSON.stringify(model.requests[0]?.messages)).toContain('[Bob] what time is it?');
    });

    it('asks with buttons before running a command, and runs it after Allow once', async () => {
      const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo done > approved.txt' } }] }, { text: 'Created approved.txt.' }]);
      const { d, hob } = await start(model);
      d.dm(OWNER, 'create the file');
      const chat = d.dmChatId(OWNER);
      const prompt = await lastText(d, chat, 'echo done > approved.txt');
      expect(prompt.buttons.map((b) => b.label)).toEqual(['Allow once', 'Always allow', 'Deny']);
      d.press(OWNER, chat, prompt.id, 'Allow once');
      await lastText(d, chat, 'Created approved.txt.');
      expect(existsSync(join(hob.dir, 'workspace', 'approved.txt'))).toBe(true);
      const edited = d.seen(chat).find((message) => message.id === prompt.id);
      expect(edited?.text).toContain('allowed once by Ann');
      expect(edited?.buttons).toEqual([]);
    });

    it('refuses a press by someone else and leaves the decision to the requester', async (context) => {
      const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'rm -rf build' } }] }, { text: 'OK, I left build alone.' }]);
      const { d } = await start(model);
      const { groupChatId, group } = d;
      if (groupChatId === undefined || !group) return context.skip('this platform has no group chats (its own tests press from another chat)');
      group(FRIEND, 'clean the build', { mention: true });
      const prompt = await lastText(d, groupChatId, 'rm -rf build');
      d.press(STRANGER, groupChatId, prompt.id, 'Allow once');
      await d.waitFor(() => d.notices(STRANGER).find((notice) => notice.includes('not yours')), 'the not-yours notice');
      expect(d.seen(groupChatId).find((message) => message.id === prompt.id)?.buttons).toHaveLength(3);
      d.press(FRIEND, groupChatId, prompt.id, 'Deny');
      await lastText(d, groupChatId, 'OK, I left build alone.');
      expect(toolResults(model, 1)[0]?.content).toContain('denied permission');
      expect(d.seen(groupChatId).find((message) => message.id === prompt.id)?.text).toContain('denied by Bob');
    });

    it('treats an unanswered approval as a denial and tells both sides', async () => {
      const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'touch x' } }] }, { text: 'You did not answer, so I did nothing.' }]);
      const { d } = await start(model, { approvalTimeoutSeconds: 0.2 });
      d.dm(OWNER, 'touch x');
      const chat = d.dmChatId(OWNER);
      const prompt = await lastText(d, chat, 'touch x');
      await lastText(d, chat, 'You did not answer');
      expect(d.seen(chat).find((message) => message.id === prompt.id)?.text).toContain('timed out');
      expect(toolResults(model, 1)[0]?.content).toContain('Nobody answered the approval request within 0.2 seconds');
    });

    it('splits a long answer into messages that fit, losing nothing', async () => {
      const { d, hob } = await start(new ScriptedModel([]));
      const paragraphs = Array.from({ length: 40 }, (_, i) => `Paragraph ${i}: ${'lorem ipsum '.repeat(Math.ceil(d.maxLength / 120))}`.trim());
      (hob.deps.provider as ScriptedModel).push({ text: paragraphs.join('\n\n') });
      d.dm(OWNER, 'write a lot');
      const chat = d.dmChatId(OWNER);
      await lastText(d, chat, 'Paragraph 39:');
      const texts = d.seen(chat).map((message) => message.text);
      expect(texts.length).toBeGreaterThan(1);
      expect(texts.every((value) => value.length <= d.maxLength)).toBe(true);
      for (const paragraph of paragraphs) expect(texts.join('\n\n').replace(/\s+/g, ' ')).toContain(paragraph.replace(/\s+/g, ' '));
    });

    it('stops a run on /stop', async () => {
      const model = new ScriptedModel([{ hang: true }]);
      const { d } = await start(model);
      d.dm(OWNER, 'think forever');
      await d.waitFor(() => model.requests.length === 1, 'the model call');
      d.dm(OWNER, '/stop');
      await lastText(d, d.dmChatId(OWNER), 'Stopped.');
    });

    it('queues a second message and answers both in order (busy_mode: queue)', async () => {
      const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'sleep 0.2' } }] }, { text: 'first answer' }, { text: 'second answer' }]);
      const { d } = await start(model, { busyMode: 'queue' });
      d.dm(OWNER, 'first');
      const prompt = await lastText(d, d.dmChatId(OWNER), 'sleep 0.2');
      d.dm(OWNER, 'second');
      d.press(OWNER, d.dmChatId(OWNER), prompt.id, 'Allow once');
      await lastText(d, d.dmChatId(OWNER), 'second answer');
      const texts = d.seen(d.dmChatId(OWNER)).map((message) => message.text);
      expect(texts.indexOf('first answer')).toBeGreaterThan(-1);
      expect(texts.indexOf('first answer')).toBeLessThan(texts.indexOf('second answer'));
      expect(JSON.stringify(model.requests[1]?.messages)).not.toContain('second'); // not steered into the first run
    });

    it('/stop drops queued messages and says how many', async () => {
      const model = new ScriptedModel([{ hang: true }]);
      const { d } = await start(model, { busyMode: 'queue' });
      model.push({ text: 'second answer' });
      d.dm(OWNER, 'first');
      await d.waitFor(() => model.requests.length === 1, 'the first model call');
      d.dm(OWNER, 'second');
      d.dm(OWNER, '/stop');
      await lastText(d, d.dmChatId(OWNER), 'Stopped.');
      expect(model.requests).toHaveLength(1); // /stop dropped the queued message, and said so
      await lastText(d, d.dmChatId(OWNER), 'Dropped 1 queued message');
    });

    it('steers a message sent mid-run into the next model call (busy_mode: steer)', async () => {
      const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'sleep 0.2' } }] }, { text: 'checked the logs too' }]);
      const { d } = await start(model, { busyMode: 'steer' });
      d.dm(OWNER, 'run it');
      const prompt = await lastText(d, d.dmChatId(OWNER), 'sleep 0.2');
      d.dm(OWNER, 'also check the logs');
      d.press(OWNER, d.dmChatId(OWNER), prompt.id, 'Allow once');
      await lastText(d, d.dmChatId(OWNER), 'checked the logs too');
      expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain('also check the logs');
    });

    it('abandons the current run for a new message (busy_mode: interrupt)', async () => {
      const model = new ScriptedModel([{ hang: true }, { text: 'answer to the new question' }]);
      const { d } = await start(model, { busyMode: 'interrupt' });
      d.dm(OWNER, 'slow question');
      await d.waitFor(() => model.requests.length === 1, 'the first model call');
      d.dm(OWNER, 'new question');
      await lastText(d, d.dmChatId(OWNER), 'answer to the new question');
      expect(d.seen(d.dmChatId(OWNER)).some((message) => message.text.includes('Stopped'))).toBe(true);
    });

    describe('live answers (when the channel streams)', () => {
      const streams = (d: ContractDriver) => (d.adapter.capabilities.streaming ?? 'none') !== 'none';
      const showsLive = (d: ContractDriver, chatId: string, text: string) =>
        Boolean(d.liveText?.(chatId)?.includes(text)) || d.seen(chatId).some((message) => message.text.includes(text));
      /** Nothing is left to send and no run is busy: what the person sees now is final. */
      const settled = (d: ContractDriver, hob: TestGateway) => {
        const outbox = new SqliteOutbox(hob.db);
        return d.waitFor(() => outbox.counts().pending === 0 && !hob.gateway.pool.all().some((conversation) => conversation.busy), 'the run to settle');
      };
      const copies = (d: ContractDriver, chatId: string, text: string) => d.seen(chatId).filter((message) => message.text.includes(text)).length;

      it('shows the answer while it is written, then delivers it exactly once', async (context) => {
        let resume: () => void = () => undefined;
        const answer = 'Counting slowly: one two three four five.';
        const model = new ScriptedModel([{ text: answer, pauseAt: 24, resume: new Promise<void>((resolve) => (resume = resolve)) }]);
        const { d, hob } = await start(model);
        if (!streams(d)) return context.skip();
        d.dm(OWNER, 'count for me');
        const chat = d.dmChatId(OWNER);
        await d.waitFor(() => showsLive(d, chat, 'Counting slowly: one two'), 'the answer appearing while it is written');
        expect(copies(d, chat, 'five.')).toBe(0);
        resume();
        await lastText(d, chat, answer);
        await settled(d, hob);
        expect(copies(d, chat, answer)).toBe(1);
        expect(d.liveText?.(chat) ?? '').not.toContain('Counting');
      });

      it('a stopped run ends the live answer: what was written so far does not stay', async (context) => {
        const model = new ScriptedModel([{ hang: true, text: 'Thinking about your question' }]);
        const { d, hob } = await start(model);
        if (!streams(d)) return context.skip();
        d.dm(OWNER, 'a hard question');
        const chat = d.dmChatId(OWNER);
        await d.waitFor(() => showsLive(d, chat, 'Thinking about your question'), 'the live answer');
        d.dm(OWNER, '/stop');
        await lastText(d, chat, 'Stopped.');
        await settled(d, hob);
        expect(showsLive(d, chat, 'Thinking about')).toBe(false);
      });

      it('text written before a tool call gives way to the answer after it, delivered once', async (context) => {
        const model = new ScriptedModel([{ text: 'Let me check first.', toolCalls: [{ name: 'bash', input: { command: 'echo checked' } }] }, { text: 'All checked, nothing wrong.' }]);
        const { d, hob } = await start(model);
        if (!streams(d)) return context.skip();
        d.dm(OWNER, 'check it');
        const chat = d.dmChatId(OWNER);
        const prompt = await lastText(d, chat, 'echo checked');
        d.press(OWNER, chat, prompt.id, 'Allow once');
        await lastText(d, chat, 'All checked, nothing wrong.');
        await settled(d, hob);
        expect(copies(d, chat, 'All checked, nothing wrong.')).toBe(1);
        expect(showsLive(d, chat, 'Let me check first.')).toBe(false);
      });

      it('a long answer shows while it is written, then arrives whole, each part once; a live message in the chat becomes its first part', async (context) => {
        let resume: () => void = () => undefined;
        const { d, hob } = await start(new ScriptedModel([]));
        if (!streams(d)) return context.skip();
        const paragraphs = Array.from({ length: 30 }, (_, i) => `Paragraph ${i}: ${'lorem ipsum '.repeat(Math.ceil(d.maxLength / 200))}`.trim());
        const answer = paragraphs.join('\n\n');
        (hob.deps.provider as ScriptedModel).push({ text: answer, pauseAt: 40, resume: new Promise<void>((resolve) => (resume = resolve)) });
        d.dm(OWNER, 'write a lot');
        const chat = d.dmChatId(OWNER);
        await d.waitFor(() => showsLive(d, chat, 'Paragraph 0:'), 'the answer appearing while it is written');
        // A live view in the chat (a stream, an edited message) is the message the answer starts in.
        const live = d.seen(chat).find((message) => message.text.includes('Paragraph 0:'));
        resume();
        await lastText(d, chat, 'Paragraph 29:');
        await settled(d, hob);
        const seen = d.seen(chat);
        expect(seen.map((message) => message.text).join('\n\n').replace(/\s+/g, ' ')).toBe(answer.replace(/\s+/g, ' '));
        expect(seen.every((message) => message.text.length <= d.maxLength)).toBe(true);
        for (const paragraph of paragraphs) expect(seen.filter((message) => message.text.includes(`${paragraph.split(':')[0]}:`))).toHaveLength(1);
        if (live) expect(seen[0]?.id).toBe(live.id);
        expect(d.liveText?.(chat) ?? '').toBe('');
      });

      it('sends the answer as usual when the live view cannot become it', async (context) => {
        const model = new ScriptedModel([{ text: 'An answer sent the ordinary way.' }]);
        const { d, hob } = await start(model);
        if (!streams(d)) return context.skip();
        // Drafts never become the answer; other live views are refused when the driver can.
        if (d.adapter.capabilities.streaming !== 'draft') {
          if (!d.refuseLiveFinish) return context.skip();
          d.refuseLiveFinish();
        }
        d.dm(OWNER, 'answer me');
        const chat = d.dmChatId(OWNER);
        await lastText(d, chat, 'An answer sent the ordinary way.');
        await settled(d, hob);
        expect(copies(d, chat, 'An answer sent the ordinary way.')).toBe(1);
        expect(new SqliteOutbox(hob.db).counts()).toMatchObject({ pending: 0, failed: 0 });
      });
    });

    it('gives an unknown person a pairing code and lets the owner approve them with a button', async () => {
      const model = new ScriptedModel([{ text: 'Welcome, Eve!' }]);
      const { d } = await start(model);
      d.dm(STRANGER, 'hello?');
      const code = await d.waitFor(() => /pairing code is ([A-Z0-9]{8})/.exec(d.seen(d.dmChatId(STRANGER)).map((m) => m.text).join('\n'))?.[1], 'a pairing code');
      const request = await lastText(d, d.dmChatId(OWNER), code);
      d.press(OWNER, d.dmChatId(OWNER), request.id, `Approve ${STRANGER.name}`);
      await lastText(d, d.dmChatId(STRANGER), "You're approved");
      d.dm(STRANGER, 'hello again');
      await lastText(d, d.dmChatId(STRANGER), 'Welcome, Eve!');
      expect(model.requests).toHaveLength(1);
    });
  });
}
