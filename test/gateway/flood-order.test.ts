import { describe, it } from 'vitest';
import { messageText } from '../../src/core/messages.js';
import type { ProviderEvent, ProviderRequest } from '../../src/providers/types.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { OWNER, startTestGateway } from '../support/gateway.js';

/** A model that takes a random 0–12 ms to answer, so runs end at every possible moment of the flood. */
class JitteryModel extends ScriptedModel {
  override async *stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 12));
    yield* super.stream(request, signal);
  }
}

/** A platform that takes 0–10 ms to accept each message, as a real one does. */
class LaggyChannel extends MemoryChannel {
  override async send(...args: Parameters<MemoryChannel['send']>): ReturnType<MemoryChannel['send']> {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
    return super.send(...args);
  }
}

const FLOOD = 200;
const FLOODS = 6;

/** The person's messages as the model last saw the conversation: every `m-N`, in order. */
function seenOrder(model: ScriptedModel): number[] {
  const last = model.requests.at(-1);
  const userText = (last?.messages ?? []).filter((m) => m.role === 'user').map((m) => messageText(m)).join('\n');
  return [...userText.matchAll(/\bm-(\d+)\b/g)].map((match) => Number(match[1]));
}

// The floods run at the same time, each on its own gateway, channel and model: a flood is
// mostly waiting between its messages, and the others' work only adds to the jitter.
describe.concurrent('order under a flood (busy_mode steer)', () => {
  it.for(Array.from({ length: FLOODS }, (_, i) => i + 1))(
    `flood %i: ${FLOOD} messages at random gaps reach the model once each, in the order sent`,
    { timeout: 60_000 },
    async (_flood, { expect, onTestFinished }) => {
      const channel = new LaggyChannel();
      const model = new JitteryModel([]);
      const hob = await startTestGateway(channel, model);
      onTestFinished(() => hob.close());
      // The flood itself: about 9 ms apart on average, sometimes back to back.
      for (let i = 0; i < FLOOD; i++) {
        channel.say(OWNER, `m-${i}`);
        const gap = Math.random() < 0.2 ? 0 : Math.random() * 18;
        if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
      }
      const all = Array.from({ length: FLOOD }, (_, i) => i);
      await channel.waitFor(() => seenOrder(model).length === FLOOD, 30_000, 'every message to reach the model');
      expect(seenOrder(model)).toEqual(all);
      expect(channel.chat(`dm-${OWNER.id}`).filter((m) => m.text.includes('so I did not take this one'))).toEqual([]);
    },
  );
});
