import type { UpdateFeed } from './update-feed.js';
import type { Json } from './types.js';
import type { FakeWorld } from './world.js';

/** One webhook POST the fake made: which update, to which target, and how the target answered. */
export type WebhookDelivery = { updateId: number; target: string; status: number | 'unreachable' };

/**
 * Telegram's webhook side with a load balancer in front of the bot's public https URL (the
 * fake cannot reach `https://…`, so `balance(targets)` stands for the balancer): once the bot
 * has set a webhook, each pending update is POSTed, one at a time and in order, to the next
 * target in turn, with the X-Telegram-Bot-Api-Secret-Token the bot chose. An answer other than
 * 2xx (or no answer) sends the update to the next target, as a balancer's retry would; after
 * every target failed it stays pending and goes again at the next push or Bot API call.
 */
export class WebhookPush {
  readonly deliveries: WebhookDelivery[] = [];
  private targets: string[] = [];
  private next = 0;
  private running = false;
  /** A kick came while a drain ran: drain again after it (its updates may have come after its last look). */
  private again = false;

  constructor(
    private readonly world: FakeWorld,
    private readonly feed: UpdateFeed,
    private readonly changed: () => void,
  ) {}

  balance(targets: string[]): void {
    this.targets = [...targets];
    this.next = 0;
    this.kick();
  }

  /** Delivers what is pending, when a webhook is set and there is somewhere to send it. */
  kick(): void {
    if (this.world.webhookUrl === '' || this.targets.length === 0) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.drain().then((delivered) => {
      this.running = false;
      this.changed();
      if (this.again && delivered) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** False when an update found no target that took it (it stays pending). */
  private async drain(): Promise<boolean> {
    for (let update = this.feed.peek(); update && this.world.webhookUrl !== ''; update = this.feed.peek()) {
      if (!(await this.deliver(update))) return false;
      this.feed.confirm(update.update_id as number);
      this.changed();
    }
    return true;
  }

  private async deliver(update: Json): Promise<boolean> {
    for (let tries = 0; tries < this.targets.length; tries++) {
      const target = this.targets[this.next % this.targets.length] as string;
      this.next++;
      const status = await post(target, update, this.world.webhookSecret);
      this.deliveries.push({ updateId: update.update_id as number, target, status });
      if (typeof status === 'number' && status >= 200 && status < 300) return true;
    }
    return false;
  }
}

async function post(target: string, update: Json, secret: string): Promise<number | 'unreachable'> {
  try {
    const response = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret ? { 'x-telegram-bot-api-secret-token': secret } : {}) },
      body: JSON.stringify(update),
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 'unreachable';
  }
}
