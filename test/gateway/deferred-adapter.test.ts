import { afterEach, describe, expect, it } from 'vitest';
import type { ChannelAdapter, InboundSink } from '../../src/gateway/channel.js';
import { DeferredAdapter } from '../../src/gateway/deferred-adapter.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

/** `hob start` loads each channel's SDK in the background; each channel starts once its own has loaded. */

class ObservedChannel extends MemoryChannel {
  started = false;
  override async start(sink: InboundSink): Promise<void> {
    await super.start(sink);
    this.started = true;
  }
}

/** A channel that is only ever started and stopped (it stands for one whose SDK loads slowly). */
const idleChannel = (platform: string): ChannelAdapter => ({
  platform,
  capabilities: new MemoryChannel().capabilities,
  start: async () => undefined,
  stop: async () => undefined,
  send: async () => ({ chatId: 'none', messageId: 'none' }),
  edit: async () => undefined,
  typing: async () => undefined,
});

let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

describe('channels that load in the background', () => {
  it('a channel answers as soon as its own adapter has loaded, while another is still loading', async () => {
    const channel = new ObservedChannel();
    const loaded = new DeferredAdapter(channel.platform, channel.capabilities, async () => channel);
    let finishLoading: (adapter: ChannelAdapter) => void = () => undefined;
    const slow = new DeferredAdapter('slow', channel.capabilities, () => new Promise<ChannelAdapter>((resolve) => (finishLoading = resolve)));
    const allowed = { allowFrom: [OWNER.id], allowedGroups: [] };
    const starting = startTestGateway(loaded, new ScriptedModel([{ text: 'Answered while the other channel loads.' }]), {
      adapters: [slow, loaded],
      access: new Map([[channel.platform, allowed], ['slow', allowed]]),
    });
    await channel.waitFor(() => channel.started, 5000, 'the loaded channel to start');
    channel.say(OWNER, 'hi');
    await channel.waitFor(() => channel.chat(`dm-${OWNER.id}`).find((message) => message.text === 'Answered while the other channel loads.'), 5000, 'the answer');
    expect(slow.botName).toBeUndefined();
    finishLoading(idleChannel('slow'));
    hob = await starting;
  });

  it('a channel whose adapter fails to load fails its start with the reason, and stops quietly', async () => {
    const broken = new DeferredAdapter('broken', new MemoryChannel().capabilities, async () => {
      throw new Error('Cannot find module discord.js');
    });
    await expect(broken.start({ message: () => undefined, button: () => undefined })).rejects.toThrow('Cannot find module discord.js');
    await expect(broken.stop()).resolves.toBeUndefined();
  });

  it('a channel stopped while it is still connecting is stopped once its handshake is done, so no connection outlives the stop', async () => {
    const events: string[] = [];
    let finishHandshake: () => void = () => undefined;
    const connecting = new DeferredAdapter('connecting', new MemoryChannel().capabilities, async () => ({
      ...idleChannel('connecting'),
      start: () => new Promise<void>((resolve) => (finishHandshake = resolve)).then(() => void events.push('connected')),
      stop: async () => void events.push('stopped'),
    }));
    void connecting.connect();
    await connecting.sdkLoaded;
    const stopping = connecting.stop();
    await new Promise((resolve) => setImmediate(resolve));
    finishHandshake();
    await stopping;
    expect(events).toEqual(['connected', 'stopped']);
  });

  it('a channel connected before the gateway exists holds what people write, and the gateway answers each once, in order', async () => {
    const channel = new ObservedChannel();
    const early = new DeferredAdapter(channel.platform, channel.capabilities, async () => channel);
    await early.connect();
    expect(channel.started).toBe(true);
    channel.say(OWNER, 'first, while hob starts');
    channel.say(OWNER, 'second, while hob starts');
    expect(early.held).toBe(2);
    hob = await startTestGateway(early, new ScriptedModel([{ text: 'Answer one.' }, { text: 'Answer two.' }, { text: 'Answer three.' }]), {
      access: new Map([[channel.platform, { allowFrom: [OWNER.id], allowedGroups: [] }]]),
    });
    const answers = () => channel.chat(`dm-${OWNER.id}`).map((message) => message.text).filter((text) => text.startsWith('Answer'));
    await channel.waitFor(() => answers().length >= 2, 5000, 'both answers');
    expect(answers()).toEqual(['Answer one.', 'Answer two.']);
    expect(early.held).toBe(0);
    // From now on messages go straight to the gateway.
    channel.say(OWNER, 'third');
    expect(early.held).toBe(0);
    await channel.waitFor(() => answers().length >= 3, 5000, 'the third answer');
    expect(answers()).toEqual(['Answer one.', 'Answer two.', 'Answer three.']);
  });
});
