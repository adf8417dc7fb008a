import '../support/env.js';
import { channelContract, type Person } from '../gateway/channel-contract.js';
import { FRIEND, OWNER, STRANGER } from '../support/gateway.js';
import type { WebPageClient } from '../support/web-client.js';
import { webBed } from '../support/web-testbed.js';

/**
 * The contract against the web adapter, driven as its pages drive it: each person signs in
 * with a real one-time link and talks over the page's HTTP calls and event stream. A person's
 * chat is named by their id. The web has no group chats, so the two group tests skip; pressing
 * from another person's chat is covered in web-http.test.ts and in the browser.
 */
channelContract('web (the page over HTTP and Server-Sent Events)', async () => {
  const bed = await webBed();
  const pages = new Map<string, Promise<WebPageClient>>();
  const names = new Map<string, Person>([OWNER, FRIEND, STRANGER].map((person) => [person.id, person]));
  const pageOf = (person: Person): Promise<WebPageClient> => {
    names.set(person.id, person);
    let page = pages.get(person.id);
    if (!page) {
      page = bed.page(person);
      pages.set(person.id, page);
    }
    return page;
  };
  const opened = new Map<string, WebPageClient>();
  const openedPage = (person: Person): WebPageClient | undefined => {
    void pageOf(person).then((page) => opened.set(person.id, page));
    return opened.get(person.id);
  };
  // What people do happens in order, as in a real chat (each step waits for the one before).
  let steps: Promise<unknown> = Promise.resolve();
  const step = (action: () => Promise<unknown>) => {
    steps = steps.then(action).catch((error: unknown) => console.error('web contract step failed', error));
  };
  return {
    adapter: bed.adapter,
    maxLength: bed.adapter.capabilities.maxMessageLength,
    dmChatId: (person) => person.id,
    dm: (person, text) => step(async () => (await pageOf(person)).say(text)),
    seen: (chatId) => {
      const person = names.get(chatId) ?? { id: chatId, name: chatId };
      return (openedPage(person)?.botMessages() ?? []).map(({ id, text, buttons }) => ({ id, text, buttons }));
    },
    press: (person, chatId, messageId, label) => {
      const owner = names.get(chatId) ?? { id: chatId, name: chatId };
      const button = openedPage(owner)?.botMessages().find((message) => message.id === messageId)?.buttons.find((entry) => entry.label === label);
      if (!button) throw new Error(`no button ${label} on message ${messageId}`);
      step(async () => (await pageOf(person)).press(messageId, button.data));
    },
    notices: (person) => openedPage(person)?.notices ?? [],
    waitFor: (probe, what, timeoutMs) => bed.waiters.waitFor(probe, timeoutMs ?? 8000, () => `timed out waiting for ${what}`),
    close: async () => {
      await steps;
      await bed.close();
    },
  };
});
