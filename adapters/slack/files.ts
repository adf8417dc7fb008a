/**
 * A Slack file's bytes: by the private URL an event carries, with the bot token, or by the
 * file's id (files.info, then that URL) for a file the inbox kept by ref across a restart.
 */
import type { WebClient } from '@slack/web-api';
import { errorMessage } from '../../src/core/errors.js';
import type { SlackFile } from './normalize.js';

export class SlackFiles {
  constructor(
    private readonly client: WebClient,
    private readonly botToken: string,
  ) {}

  /** A file's bytes by Slack file id. */
  readonly download = async (fileId: string): Promise<Buffer> => {
    const info = await this.client.files.info({ file: fileId });
    const url = info.file ? fileUrlOf(info.file) : undefined;
    if (!url) throw new Error('Slack gave no download URL for this file');
    return this.fetch(url);
  };

  /** How an attachment's bytes are fetched: by the URL the event carried, else by its id. */
  loaderOf(file: SlackFile): (fileId: string) => Promise<Buffer> {
    const url = fileUrlOf(file);
    return url !== undefined ? () => this.fetch(url) : this.download;
  }

  private async fetch(url: string): Promise<Buffer> {
    let response: Response;
    try {
      response = await fetch(url, { headers: { authorization: `Bearer ${this.botToken}` } });
    } catch (error) {
      throw new Error(`Slack file download failed: ${errorMessage(error)}`);
    }
    if (!response.ok) throw new Error(`Slack file download failed: HTTP ${response.status}`);
    // Without the files:read scope Slack answers with its sign-in page instead of the file.
    if ((response.headers.get('content-type') ?? '').startsWith('text/html')) throw new Error('Slack sent a web page instead of the file; the app needs the files:read scope');
    return Buffer.from(await response.arrayBuffer());
  }
}

/** Where a file's bytes are (the download URL, else the private one); an empty URL is none. */
function fileUrlOf(file: { url_private_download?: string; url_private?: string }): string | undefined {
  return file.url_private_download || file.url_private || undefined;
}
