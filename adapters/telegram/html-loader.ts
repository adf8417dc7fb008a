/**
 * Telegram's HTML rendering (html.ts, with marked: ~57 KB of code to compile), loaded once:
 * with the first message hob sends or a person writes, not while the channel connects, in
 * `hob start`'s way to each channel being up. What renders awaits `loadHtml()` first; the
 * functions below then call the loaded module.
 */
import type * as Html from './html.js';

let html: typeof Html | undefined;
let loading: Promise<typeof Html> | undefined;

export function loadHtml(): Promise<typeof Html> {
  return (loading ??= import('./html.js').then((module) => (html = module)));
}

function loaded(): typeof Html {
  if (!html) throw new Error('Telegram HTML was rendered before html.ts loaded (await loadHtml() first)');
  return html;
}

/** html.ts's markdownToTelegramHtml, after `loadHtml()`. */
export function markdownToTelegramHtml(markdown: string): string {
  return loaded().markdownToTelegramHtml(markdown);
}

/** html.ts's stripMarkdown, after `loadHtml()`. */
export function stripMarkdown(markdown: string): string {
  return loaded().stripMarkdown(markdown);
}
