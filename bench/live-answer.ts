/**
 * What live answers add to a reply: an instant model that writes its answer in 50 text
 * deltas, one conversation at a time, through the in-memory channel with streaming `none`
 * (the answer is sent when complete), `draft` (a preview updated per delta, then the answer
 * sent) and `native` (a message edited per delta that becomes the answer; the outbox row is
 * marked instead of sent). Timed from the message handed to the gateway to the answer in
 * the chat (sent, or the streamed message finished). The in-memory channel costs nothing,
 * so the difference is the gateway's own work per delta and per answer.
 */
import { rmSync } from 'node:fs';
import type { ChannelCapabilities } from '../src/gateway/channel.js';
import { emptyUsage, type Message } from '../src/core/messages.js';
import type { ProviderClient, ProviderEvent } from '../src/providers/types.js';
import { MemoryChannel } from '../test/fakes/memory-channel.js';
import { OWNER, startTestGateway } from '../test/support/gateway.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const DELTAS = 50;
const ROUNDS = 500;
const WARMUP = 50;
const ANSWER = Array.from({ length: DELTAS }, (_, n) => `word${n}`).join(' ');

/** Answers at once, in DELTAS pieces. */
class StreamingModel implements ProviderClient {
  readonly provider = 'instant';
  readonly model = 'instant-streaming';

  async *stream(): AsyncIterable<ProviderEvent> {
    for (const piece of ANSWER.match(/\S+\s*/g) ?? []) yield { type: 'text_delta', text: piece };
    const message: Message = { role: 'assistant', content: [{ type: 'text', text: ANSWER }] };
    yield { type: 'done', message, stopReason: 'end_turn', usage: { ...emptyUsage(), inputTokens: 10, outputTokens: DELTAS }, model: this.model };
  }
}

type Mode = NonNullable<ChannelCapabilities['streaming']>;
const MODES: Mode[] = ['none', 'draft', 'native'];

/** One gateway per mode; `once` times one message from the sink to the answer in the chat. */
async function startMode(streaming: Mode) {
  const channel = new MemoryChannel({ streaming });
  const hob = await startTestGateway(channel, new StreamingModel(), { tools: [] });
  let answered: (() => void) | undefined;
  channel.onSend = (_target, message) => {
    if (message.text === ANSWER) answered?.();
  };
  channel.beforeLiveFinish = async () => answered?.();
  return {
    hob,
    async once(): Promise<number> {
      const done = new Promise<void>((resolve) => (answered = resolve));
      const started = performance.now();
      channel.say(OWNER, 'hello');
      await done;
      const elapsed = performance.now() - started;
      // Wait for the run to end before the next message, and keep the fake's memory flat.
      while (hob.gateway.pool.all().some((conversation) => conversation.busy)) await new Promise((resolve) => setImmediate(resolve));
      channel.chats.clear();
      channel.liveLog.length = 0;
      return elapsed;
    },
  };
}

export async function run(): Promise<BenchResult> {
  const gateways = await Promise.all(MODES.map(startMode));
  const samples = new Map<Mode, number[]>(MODES.map((mode) => [mode, []]));
  try {
    // Modes take turns, so warm-up, garbage collection and WAL checkpoints fall on all alike.
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      for (const [index, mode] of MODES.entries()) {
        const elapsed = await (gateways[index] as Awaited<ReturnType<typeof startMode>>).once();
        if (round >= WARMUP) samples.get(mode)?.push(elapsed);
      }
    }
  } finally {
    for (const { hob } of gateways) {
      await hob.close();
      rmSync(hob.dir, { recursive: true, force: true });
    }
  }
  const base = median(samples.get('none') ?? []);
  const summary = MODES.map((mode) => {
    const values = samples.get(mode) ?? [];
    const delta = median(values) - base;
    const what = mode === 'none' ? 'answer sent when complete' : `${DELTAS} live updates`;
    return (
      `live answers, streaming ${mode} (${DELTAS} deltas, ${what}): median ${fmt(median(values))} ms, p99 ${fmt(percentile(values, 0.99))} ms per message` +
      (mode === 'none' ? '' : ` (${delta >= 0 ? '+' : '−'}${fmt(Math.abs(delta))} ms vs none)`)
    );
  });
  for (const line of summary) console.log(line);
  return { name: 'live-answer', summary };
}

runIfMain(import.meta.url, run);
