import type { ButtonPress, InboundMessage, InboundSink } from './channel.js';

type Held = { kind: 'message'; message: InboundMessage } | { kind: 'button'; press: ButtonPress };

/**
 * The sink of a channel that connected before the gateway was built (`hob start` connects
 * its channels first and builds the rest while their handshakes wait on the network): what
 * arrives meanwhile is kept in order, in memory, and handed to the gateway once, when it is
 * ready (`release`); from then on everything goes straight through. Nothing is answered
 * before the gateway has recovered what a restart left, so nothing is answered twice.
 */
export class HeldInbound implements InboundSink {
  private target: InboundSink | undefined;
  private held: Held[] = [];

  /** Events waiting for the gateway (0 once released). */
  get waiting(): number {
    return this.held.length;
  }

  message(message: InboundMessage): void {
    if (this.target) this.target.message(message);
    else this.held.push({ kind: 'message', message });
  }

  button(press: ButtonPress): void {
    if (this.target) this.target.button(press);
    else this.held.push({ kind: 'button', press });
  }

  /** Hands what was held to `target`, in the order it arrived, and passes everything after it straight on. */
  release(target: InboundSink): void {
    const held = this.held;
    this.held = [];
    this.target = target;
    for (const event of held) {
      if (event.kind === 'message') target.message(event.message);
      else target.button(event.press);
    }
  }
}
