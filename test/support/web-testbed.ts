import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AdapterLogger } from '../../adapters/logger.js';
import { webConfigSchema, type WebConfig } from '../../adapters/web/config.js';
import { signInLink } from '../../adapters/web/links.js';
import { createWebAdapter, type WebAdapter } from '../../adapters/web/web-adapter.js';
import { Waiters } from '../fakes/waiters.js';
import { tempDir } from './engine.js';
import { WebPageClient } from './web-client.js';

export type Person = { id: string; name: string };

/** A port nobody listens on now (the web config's port must be known before start: links name it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A web adapter on a free loopback port in a fresh data dir, and pages that sign in with real links. */
export type WebBed = {
  adapter: WebAdapter;
  config: WebConfig;
  dataDir: string;
  waiters: Waiters;
  /** A one-time sign-in link, made as `hob web link --as ID --name NAME` makes it. */
  link(person: Person): string;
  /** A page signed in as the person with a fresh link, its event stream open (after the adapter started). */
  page(person: Person): Promise<WebPageClient>;
  /** Another adapter on the same data dir and port, as after a restart (this one must be stopped). */
  restart(): WebAdapter;
  close(): Promise<void>;
};

export async function webBed(options: { allowFrom?: string[]; dataDir?: string; logger?: AdapterLogger } = {}): Promise<WebBed> {
  const dataDir = options.dataDir ?? tempDir('hob-web-');
  const config = webConfigSchema.parse({ port: await freePort(), allow_from: options.allowFrom ?? ['100', '200', '300'] });
  const logger = options.logger ?? { info: () => undefined, warn: () => undefined, error: () => undefined };
  const make = () => createWebAdapter({ config, dataDir, logger, liveIntervalMs: 20, sessionCheckMs: 200 });
  const waiters = new Waiters();
  const pages: WebPageClient[] = [];
  let adapter = make();
  const bed: WebBed = {
    get adapter() {
      return adapter;
    },
    config,
    dataDir,
    waiters,
    link: (person) => signInLink(config, dataDir, person.id, person.name).url,
    page: async (person) => {
      const page = new WebPageClient(adapter.url, waiters);
      pages.push(page);
      const signedIn = await page.signIn(bed.link(person));
      if (!signedIn.ok) throw new Error(`sign-in refused: ${signedIn.status} ${await signedIn.text()}`);
      await page.open();
      return page;
    },
    restart: () => (adapter = make()),
    close: async () => {
      for (const page of pages) page.close();
      await adapter.stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return bed;
}
