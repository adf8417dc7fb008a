import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { messageText } from '../../src/core/messages.js';
import { STOPPED_NOTE } from '../../src/engine/query-engine.js';
import { SqliteOutbox } from '../../src/store/sqlite/outbox.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { tempDir } from '../support/engine.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { adapter, fake, logs, useTelegramTestbed } from '../support/telegram-testbed.js';

/** Answers written live as Telegram drafts, in DMs, with the native stop button. */

useTelegramTestbed();

let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

const ann = { id: Number(OWNER.id), first_name: OWNER.name };
const bob = { id: Number(FRIEND.id), first_name: FRIEND.name };
const annDm = { id: ann.id, type: 'private' as const };
const GROUP = { id: -1002, type: 'supergroup' as const, title: 'Team' };
const drafts = () => fake.callsOf('sendMessageDraft');
const sentTexts = (chatId: number) => fake.chat(chatId).map((message) => message.text);
const settled = () => fake.waitFor(() => hob && new SqliteOutbox(hob.db).counts().pending === 0 && !hob.gateway.pool.all().some((c) => c.busy), 5000, 'the run to settle');

describe('Telegram drafts', () => {
  it('writes the answer into a DM draft with a stop button, then sends it as the message that replaces the draft', async () => {
    let resume: () => void = () => undefined;
    const answer = 'Here is the plan: **first** we look, then we fix it.';
    hob = await startTestGateway(adapter({ draftIntervalMs: 20 }), new ScriptedModel([{ text: answer, pauseAt: 27, resume: new Promise<void>((r) => (resume = r)) }]));
    fake.sendText(ann, annDm, 'what is the plan?');
    const shown = await fake.waitFor(() => (fake.draft(ann.id)?.text.includes('Here is the plan: first') ? fake.draft(ann.id) : undefined), 5000, 'the draft');
    expect(shown.canStop).toBe(true);
    // Rendered like the answer (bold as HTML), so the draft and the answer read the same.
    expect(shown.sentText).toContain('<b>first</b>');
    expect(sentTexts(ann.id)).toEqual([]);
    resume();
    await fake.waitFor(() => sentTexts(ann.id).includes('Here is the plan: first we look, then we fix it.'), 5000, 'the answer');
    await settled();
    expect(fake.draft(ann.id)).toBeUndefined();
    expect(sentTexts(ann.id)).toEqual(['Here is the plan: first we look, then we fix it.']);
    // One draft, growing: the same id every time, the stop button on every update.
    const ids = new Set(drafts().map((call) => call.body.draft_id));
    expect(ids.size).toBe(1);
    expect(drafts().every((call) => call.body.can_stop === true)).toBe(true);
  });

  it('throttles the draft: updates made while one waits are coalesced into the newest text', async () => {
    const telegram = adapter({ draftIntervalMs: 50 });
    hob = await startTestGateway(telegram, new ScriptedModel([]));
    const live = telegram.liveAnswer?.({ chatId: String(ann.id) }, { chatType: 'dm', userId: OWNER.id });
    if (!live) throw new Error('no live answer in a DM');
    live.update('One');
    await fake.waitForCall('sendMessageDraft');
    for (const text of ['One two', 'One two three', 'One two three four']) live.update(text);
    await fake.waitForCall('sendMessageDraft', (call) => call.body.text === 'One two three four');
    expect(drafts().map((call) => call.body.text)).toEqual(['One', 'One two three four']);
    expect(await live.finish({ text: 'One two three four.', parts: ['One two three four.'] })).toBeUndefined(); // a draft never is the answer
    live.update('too late');
    expect(drafts()).toHaveLength(2);
  });

  it('the stop button stops the run as /stop does; a stop pressed on a finished draft is ignored', async () => {
    const model = new ScriptedModel([{ hang: true, text: 'Let me think about this for a long while' }, { text: 'A second answer.' }]);
    hob = await startTestGateway(adapter({ draftIntervalMs: 20 }), model);
    fake.sendText(ann, annDm, 'think hard');
    await fake.waitFor(() => fake.draft(ann.id)?.text.includes('for a long while'), 5000, 'the draft');
    const draftId = fake.draft(ann.id)?.draftId;
    fake.pressDraftStop(ann, ann.id);
    await fake.waitFor(() => sentTexts(ann.id).some((text) => text.includes('Stopped.')), 5000, '"Stopped."');
    await settled();
    expect(fake.draft(ann.id)).toBeUndefined();
    expect(sentTexts(ann.id).join('\n')).not.toContain('for a long while');

    // The same draft's stop arriving again later (or late) must not stop the next run.
    fake.sendText(ann, annDm, 'and now?');
    await fake.waitFor(() => sentTexts(ann.id).includes('A second answer.'), 5000, 'the second answer');
    // The stopped run is closed in the history: the model sees what it had written, the note, then the new turn.
    expect(model.requests[1]?.messages.map((m) => `${m.role}: ${messageText(m)}`)).toEqual([
      'user: think hard',
      `assistant: Let me think about this for a long while\n\n${STOPPED_NOTE}`,
      'user: and now?',
    ]);
    const before = sentTexts(ann.id).length;
    fake.pushUpdate({ stopped_message_generation: { chat: { id: ann.id, type: 'private', first_name: ann.first_name }, draft_id: draftId } });
    await fake.waitFor(() => logs.find((entry) => entry.message.includes('no longer written')), 5000, 'the ignored stop');
    await settled();
    expect(sentTexts(ann.id)).toHaveLength(before);
  });

  it('a draft is never the only copy: hob dying before the answer went out delivers it once after the restart', async () => {
    const dir = tempDir('hob-draft-crash-');
    const answer = 'The answer that survives the crash.';
    fake.failNext('sendMessage', { disconnect: true });
    hob = await startTestGateway(adapter({ draftIntervalMs: 20 }), new ScriptedModel([{ text: answer, pauseAt: 10, resume: fake.waitForCall('sendMessageDraft') }]), { dir });
    fake.sendText(ann, annDm, 'hi');
    await fake.waitForCall('sendMessage', (call) => call.response?.status === 0);
    await hob.gateway.stop({ stopRuns: false }); // as if killed
    hob.db.close();
    expect(sentTexts(ann.id)).toEqual([]);

    hob = await startTestGateway(adapter(), new ScriptedModel([]), { dir });
    await fake.waitFor(() => sentTexts(ann.id).includes(answer), 5000, 'the stored answer');
    await settled();
    expect(sentTexts(ann.id)).toEqual([answer]);
  });

  it('a 429 on a draft is not waited out: the draft pauses and the answer goes out at once', async () => {
    fake.failNext('sendMessageDraft', { retryAfter: 2 });
    const answer = 'Answered while the draft was paused.';
    hob = await startTestGateway(adapter({ draftIntervalMs: 20 }), new ScriptedModel([{ text: answer, pauseAt: 9, resume: fake.waitForCall('sendMessageDraft') }]));
    fake.sendText(ann, annDm, 'hi');
    await fake.waitFor(() => sentTexts(ann.id).includes(answer), 5000, 'the answer');
    await settled();
    expect(drafts().map((call) => call.response?.status)).toEqual([429]); // not retried behind the answer
    expect(fake.callsOf('sendMessage')).toHaveLength(1);
  });

  it('in a group there is no draft: the progress message is edited in place and the answer follows', async () => {
    const model = new ScriptedModel([{ text: 'Checking.', toolCalls: [{ name: 'bash', input: { command: 'echo group-ok' } }] }, { text: 'The group answer.' }]);
    hob = await startTestGateway(adapter({ draftIntervalMs: 20 }), model);
    fake.sendText(bob, GROUP, '@hob_test_bot check it');
    const prompt = await fake.waitFor(() => fake.chat(GROUP.id).find((message) => message.text.includes('echo group-ok')), 5000, 'the approval prompt');
    const data = (prompt.replyMarkup as { inline_keyboard: { text: string; callback_data: string }[][] }).inline_keyboard.flat().find((button) => button.text === 'Allow once')?.callback_data ?? '';
    fake.pressButton(bob, GROUP, prompt.messageId, data);
    await fake.waitFor(() => sentTexts(GROUP.id).includes('The group answer.'), 5000, 'the answer');
    await settled();
    expect(drafts()).toEqual([]);
    const progress = fake.chat(GROUP.id).find((message) => message.text.includes('bash: echo group-ok') && message !== prompt && !message.text.includes('Allow'));
    expect(progress?.text).toContain('✅');
    expect(sentTexts(GROUP.id)).not.toContain('Checking.');
  });

  it('a Bot API without drafts turns them off; answers still arrive whole', async () => {
    fake.failNext('sendMessageDraft', { code: 404, description: 'Not Found: method not found' });
    const telegram = adapter({ draftIntervalMs: 20 });
    const model = new ScriptedModel([{ text: 'First answer, written slowly.', pauseAt: 6, resume: fake.waitForCall('sendMessageDraft') }, { text: 'Second answer.' }]);
    hob = await startTestGateway(telegram, model);
    fake.sendText(ann, annDm, 'one');
    await fake.waitFor(() => sentTexts(ann.id).includes('First answer, written slowly.'), 5000, 'the first answer');
    expect(logs.some((entry) => entry.message.includes('drafts are not available'))).toBe(true);
    expect(telegram.liveAnswer?.({ chatId: String(ann.id) }, { chatType: 'dm', userId: OWNER.id })).toBeUndefined();
    fake.sendText(ann, annDm, 'two');
    await fake.waitFor(() => sentTexts(ann.id).includes('Second answer.'), 5000, 'the second answer');
    expect(drafts()).toHaveLength(1);
  });
});
