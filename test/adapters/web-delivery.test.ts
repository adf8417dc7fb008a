import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { OWNER } from '../support/gateway.js';
import { webBed, type WebBed } from '../support/web-testbed.js';

/**
 * What lets hob send to a web chat again without the person seeing it twice: every part is
 * stored under its delivery key, a resend with the key returns what is stored, the look-up
 * after a crash reads web.db exactly, and a live answer a crash left becomes its answer or goes.
 */
let bed: WebBed | undefined;
afterEach(async () => {
  await bed?.close();
  bed = undefined;
});

const sink = { message: () => undefined, button: () => undefined };
const since = () => Date.now() - 1000;

describe('web: a delivery key on every stored message', () => {
  it('a resend with the same key returns the message that is there, and the page shows it once; the look-up finds it and not one never sent', async () => {
    bed = await webBed();
    await bed.adapter.start(sink);
    const page = await bed.page(OWNER);
    const target = { chatId: OWNER.id };
    const first = await bed.adapter.send(target, { text: 'Your answer.' }, { deliveryKey: 'a1.x' });
    const resent = await bed.adapter.send(target, { text: 'Your answer.' }, { deliveryKey: 'a1.x' });
    expect(resent.messageId).toBe(first.messageId);
    await page.waitFor(() => page.botMessages().length === 1, 'the answer');
    const found = await bed.adapter.findDelivered?.(target, [{ key: 'a1.x', message: { text: 'Your answer.' }, partsSent: 0, since: since() }, { key: 'b2.x', message: { text: 'Never sent.' }, partsSent: 0, since: since() }], new Set());
    expect(found).toEqual(new Map([['a1.x', { partsSent: 1, messageId: first.messageId, complete: true }]]));
    // Keys are per chat: the same key in another person's chat is another delivery.
    expect((await bed.adapter.findDelivered?.({ chatId: '200' }, [{ key: 'a1.x', message: { text: 'Your answer.' }, partsSent: 0, since: since() }], new Set()))?.size).toBe(0);
    // A reopened page reads the same single copy.
    const again = await bed.page(OWNER);
    expect(again.botMessages().map((message) => message.text)).toEqual(['Your answer.']);
  });

  it('a send cut off between parts is found with the parts that arrived; sending again adds only the rest', async () => {
    bed = await webBed();
    await bed.adapter.start(sink);
    const target = { chatId: OWNER.id };
    const text = Array.from({ length: 3 }, (_, n) => `Section ${n}: ${'word '.repeat(3500)}`.trim()).join('\n\n');
    // The process dies the moment the first part is stored (hob hears nothing of it).
    const cut = bed.adapter.send(target, { text }, {
      deliveryKey: 'c3.x',
      onPartSent: () => {
        throw new Error('killed');
      },
    });
    await expect(cut).rejects.toThrow('killed');
    const found = await bed.adapter.findDelivered?.(target, [{ key: 'c3.x', message: { text }, partsSent: 0, since: since() }], new Set());
    const hit = found?.get('c3.x');
    expect(hit).toMatchObject({ partsSent: 1, complete: false });
    await bed.adapter.send(target, { text }, { deliveryKey: 'c3.x', skipParts: hit?.partsSent ?? 0 });
    const page = await bed.page(OWNER);
    const shown = page.botMessages().map((message) => message.text);
    expect(shown.length).toBeGreaterThan(1);
    for (const section of ['Section 0:', 'Section 1:', 'Section 2:']) expect(shown.filter((message) => message.includes(section))).toHaveLength(1);
    expect(shown[0]?.startsWith('Section 0:')).toBe(true);
  });

  it('a live answer a crash left is hidden after the restart, then becomes its answer in place; one without an answer is removed', async () => {
    bed = await webBed();
    await bed.adapter.start(sink);
    const page = await bed.page(OWNER);
    const shown: string[] = [];
    const startLive = (key: string) =>
      bed?.adapter.liveAnswer?.({ chatId: OWNER.id }, { chatType: 'dm', userId: OWNER.id, onCreating: () => key, onShown: (ref) => shown.push(ref.messageId) });
    startLive('d4.x')?.update('The answer so far');
    await page.waitFor(() => page.botMessages().find((message) => message.live && message.text === 'The answer so far'), 'the live answer');
    const [answered] = shown;
    startLive('e5.x')?.update('Cut off while');
    await page.waitFor(() => page.botMessages().length === 2, 'the second live answer');
    const [, cutOff] = shown;
    // hob dies: neither live answer is finished.
    page.close();
    await bed.adapter.stop();
    const restarted = bed.restart();
    await restarted.start(sink);
    const after = await bed.page(OWNER);
    expect(after.botMessages()).toEqual([]);
    // What a look-up for the live message's key finds is no delivery yet.
    expect((await restarted.findDelivered?.({ chatId: OWNER.id }, [{ key: 'd4.x', message: { text: 'The answer so far' }, partsSent: 0, since: since() }], new Set()))?.size).toBe(0);
    expect(await restarted.settleLive?.({ chatId: OWNER.id, messageId: answered as string }, { text: 'The whole answer.' })).toBe(true);
    expect(await restarted.settleLive?.({ chatId: OWNER.id, messageId: cutOff as string }, undefined)).toBe(false);
    await after.waitFor(() => after.botMessages().some((message) => message.text === 'The whole answer.'), 'the settled answer');
    expect(after.botMessages()).toEqual([expect.objectContaining({ id: answered, text: 'The whole answer.', live: false })]);
    // Sending the answer's row again (its key is the live message's) returns that message.
    const resent = await restarted.send({ chatId: OWNER.id }, { text: 'The whole answer.' }, { deliveryKey: 'd4.x' });
    expect(resent.messageId).toBe(answered);
    const reopened = await bed.page(OWNER);
    expect(reopened.botMessages().map((message) => message.text)).toEqual(['The whole answer.']);
  });
});
