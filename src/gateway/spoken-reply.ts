/**
 * A spoken answer (issue 22, `voice.reply`): after the text of an answer went out, the same
 * answer as audio — a voice message or an audio file, as the channel's `spokenAnswers` says.
 * The audio is written under hob's data directory and the outbox carries only its path, so
 * a delivery retried after a restart sends the same file. The text never waits on speech
 * beyond this step, and a failed speech costs nothing but the audio.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../logger.js';
import { readNoteFacts } from '../voice/duration.js';
import type { SpokenAnswers } from '../voice/spoken-answers.js';
import type { ChannelCapabilities, OutboundMessage } from './channel.js';

/** Spoken answers older than this are removed when a new one is written: the outbox has long given up on them. */
const KEEP_SPOKEN_MS = 7 * 24 * 3600_000;

export type SpokenReplyDeps = {
  answers: SpokenAnswers;
  /** Where the audio files live (`data_dir/spoken`). */
  dir: string;
  logger: Logger;
  sessionKey: string;
};

export type SpokenReplyRequest = {
  /** The answer as the model wrote it (Markdown). */
  answer: string;
  /** The message it answers was a voice note. */
  spokenTo: boolean;
  capabilities: ChannelCapabilities;
  /** In groups, the person's message the audio answers. */
  replyTo?: string;
  send(message: OutboundMessage): Promise<unknown>;
};

/**
 * Speaks the answer and sends it, when `voice.reply` wants it for this answer and the channel
 * can deliver audio. Never throws except the AbortError of a stopped run.
 */
export async function sendSpokenReply(request: SpokenReplyRequest, deps: SpokenReplyDeps, signal: AbortSignal): Promise<void> {
  const delivery = request.capabilities.spokenAnswers;
  if (!delivery || !(await deps.answers.wants(request.answer, request.spokenTo))) return;
  const spoken = await deps.answers.speak(request.answer, delivery, signal);
  if ('error' in spoken) {
    deps.logger.warn({ session: deps.sessionKey, err: spoken.error }, 'the answer could not be spoken; it stays text only');
    return;
  }
  const { audio } = spoken;
  let path: string;
  try {
    await mkdir(deps.dir, { recursive: true });
    await removeOld(deps.dir);
    path = join(deps.dir, `${Date.now()}-${randomBytes(4).toString('hex')}-${audio.fileName}`);
    await writeFile(path, audio.data);
  } catch (error) {
    deps.logger.warn({ session: deps.sessionKey, err: errorMessage(error) }, 'could not keep the spoken answer for delivery');
    return;
  }
  // A voice message shows its length; Ogg carries it in its last page.
  const seconds = (await readNoteFacts(path).catch(() => undefined))?.seconds;
  await request.send({
    text: '',
    audio: { path, fileName: audio.fileName, mimeType: audio.mimeType, as: delivery, ...(seconds !== undefined ? { durationSeconds: seconds } : {}) },
    ...(request.replyTo !== undefined ? { replyTo: request.replyTo } : {}),
  });
}

async function removeOld(dir: string): Promise<void> {
  const now = Date.now();
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => undefined);
    if (info && now - info.mtimeMs > KEEP_SPOKEN_MS) await rm(path, { force: true });
  }
}
