import { OnFirstNeed } from '../../src/core/on-first-need.js';
import type { Button } from '../../src/gateway/channel.js';
import { isPlainText } from '../../src/gateway/format/plain-text.js';
import { MAX_MESSAGE_LENGTH } from './capabilities.js';

export { MAX_MESSAGE_LENGTH };

/** A button's label. */
const MAX_LABEL_LENGTH = 75;

/** A Block Kit block, as far as hob builds them. */
export type SlackBlock =
  | { type: 'markdown'; text: string }
  | { type: 'section'; text: { type: 'plain_text' | 'mrkdwn'; text: string } }
  | { type: 'actions'; block_id: string; elements: SlackButton[] };

type SlackButton = { type: 'button'; action_id: string; text: { type: 'plain_text'; text: string }; value: string };

/** What chat.postMessage / chat.update get for one part: blocks plus the notification text. */
export type RenderedPart = { text: string; blocks: SlackBlock[] };

/** Every hob button's action id starts so: Bolt routes presses by it. */
export const ACTION_PREFIX = 'hob_';

/** Slack's own mrkdwn, for places without a markdown block (file comments, notices). */
export function toMrkdwn(markdown: string): string {
  return neutralizeBroadcasts(isPlainText(markdown) ? markdown : slackify.loaded()(markdown).replace(/\u200b/g, '').trim());
}

/**
 * slackify-markdown (remark, micromark and character-entities' table: ~7 ms of its top level on
 * a cold start), on first need. Plain text never needs it (most short answers): the adapter
 * loads it once hob is idle after its start, and a send or an edit whose text needs it waits
 * for it first (mrkdwnFor).
 */
const slackify = new OnFirstNeed('Slack\'s mrkdwn converter', async () => (await import('slackify-markdown')).default);

export async function loadMrkdwn(): Promise<void> {
  await slackify.load();
}

/** Loads the converter first when `markdown` (not sent as plain text) needs it. */
export async function mrkdwnFor(markdown: string, plain: boolean | undefined): Promise<void> {
  if (!plain && !slackify.isLoaded && !isPlainText(markdown)) await slackify.load();
}

/**
 * `<!channel>`, `<!here>`, `<!everyone>` and `<!subteam^ID|name>` notify a whole channel or
 * group when Slack reads them in a message's text, a mrkdwn section, a markdown block or a
 * stream. In what hob sends they are shown as plain words (`@channel`, `@name`), never as
 * mentions: the model's text must not ping everyone. A word joiner after the `@` keeps Slack
 * from reading the plain word as a mention too.
 */
export function neutralizeBroadcasts(text: string): string {
  return text.replace(BROADCAST, (_token, kind: string, label: string | undefined) => {
    const name = label?.replace(/^@/, '') || (/^subteam\^/i.test(kind) ? 'group' : kind.toLowerCase());
    return `@\u2060${name}`;
  });
}

/** A broadcast mention, with its optional label: `<!here>`, `<!here|here>`, `<!subteam^S1|oncall>`. */
const BROADCAST = /<!(channel|here|everyone|subteam\^[^>|]*)(?:\|([^>]*))?>/gi;

/**
 * What of a growing text can be streamed now, neutralized: everything before a `<` that is
 * not closed yet (it may still become `<!channel>`). What is streamed is then always the
 * start of the neutralized final text, whatever comes after.
 */
export function streamablePrefix(text: string): string {
  let open = -1;
  for (let at = text.indexOf('<'); at !== -1; at = text.indexOf('<', at + 1)) {
    if (text.indexOf('>', at) === -1) {
      open = at;
      break;
    }
  }
  return neutralizeBroadcasts(open === -1 ? text : text.slice(0, open));
}

/** `&`, `<` and `>` are control characters in Slack text; plain text shows them as typed. */
export function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * One part as Slack shows it correctly: Markdown in a `markdown` block (Slack renders it,
 * code fences included), plain text in a plain_text section, buttons in actions blocks whose
 * values carry only the button's data (an approval id). Blocks are always given, so an edit
 * replaces the old ones (and drops the buttons).
 */
export function renderPart(text: string, options: { plain?: boolean; buttons?: Button[][] }): RenderedPart {
  const shown = neutralizeBroadcasts(text);
  const body: SlackBlock = options.plain ? { type: 'section', text: { type: 'plain_text', text: shown } } : { type: 'markdown', text: shown };
  return { text: options.plain ? escapeText(text) : toMrkdwn(text), blocks: [body, ...actionBlocks(options.buttons)] };
}

/** The same part without a markdown block, for when Slack refuses one (older workspaces, `invalid_blocks`). */
export function renderMrkdwnPart(text: string, options: { plain?: boolean; buttons?: Button[][] }): RenderedPart {
  const mrkdwn = options.plain ? escapeText(text) : toMrkdwn(text);
  return { text: mrkdwn, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: mrkdwn.slice(0, MAX_MESSAGE_LENGTH) } }, ...actionBlocks(options.buttons)] };
}

function actionBlocks(buttons: Button[][] | undefined): SlackBlock[] {
  const rows = (buttons ?? []).filter((row) => row.length > 0);
  return rows.map((row, rowIndex) => ({
    type: 'actions',
    block_id: `hob_row_${rowIndex}`,
    elements: row.map((button, index) => ({
      type: 'button',
      action_id: `${ACTION_PREFIX}${rowIndex}_${index}`,
      text: { type: 'plain_text', text: button.label.slice(0, MAX_LABEL_LENGTH) },
      value: button.data,
    })),
  }));
}
