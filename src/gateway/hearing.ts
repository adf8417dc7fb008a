/**
 * Voice notes in a person's message (issue 22): each is kept in the workspace's inbox, heard
 * through the transcription endpoint, and becomes that person's words: framed for the model,
 * shown back to the person as a "🎤 …" line so a mishearing can be corrected. A note that
 * cannot be heard is said in one sentence and stays saved. Commands are never read from a
 * transcript (the router took them from the caption before this runs), and in a group a note
 * nobody addressed to hob is answered only when what it says names hob.
 */
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { SpokenAnswers } from '../voice/spoken-answers.js';
import type { VoiceNotes } from '../voice/voice-notes.js';
import { tooBigSentence } from '../voice/words.js';
import { MAX_DOWNLOAD_BYTES, saveInInbox } from './attachments.js';
import type { Attachment, InboundMessage, OutboundMessage } from './channel.js';

/** What is heard as speech: voice notes, audio files and video notes (not other videos). */
export function isHearable(attachment: Attachment): boolean {
  return attachment.kind === 'voice' || attachment.kind === 'audio' || attachment.videoNote === true;
}

/**
 * A group message that does not address hob but carries a voice note (a voice note cannot
 * @mention anyone): it is taken, heard, and answered only if its words name hob.
 */
export function isOverheardVoiceNote(message: Pick<InboundMessage, 'chatType' | 'mentionsBot' | 'replyToBot' | 'attachments'>): boolean {
  return message.chatType !== 'dm' && !message.mentionsBot && !message.replyToBot && message.attachments.some((attachment) => attachment.kind === 'voice' || attachment.videoNote === true);
}

/** Whether words name hob: "hob" or the bot's own user name, as whole words, in any case. */
export function namesHob(words: string, botName?: string): boolean {
  const names = ['hob', ...(botName ? [botName, botName.replace(/_?bot$/i, '')] : [])].filter((name) => name.length >= 2);
  const escaped = names.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`(^|[^\\p{L}\\p{N}_])@?(${escaped.join('|')})(?=$|[^\\p{L}\\p{N}_])`, 'iu').test(words);
}

/** Voice in the gateway: notes heard (transcription, or the sentence saying it is not set up) and answers spoken. */
export type GatewayVoice = {
  notes: VoiceNotes;
  answers: SpokenAnswers;
  /** Where spoken answers are kept until delivered (`data_dir/spoken`). */
  spokenDir: string;
};

/** A queued message as hearing reads and rewrites it. */
export type HearableMessage = {
  text: string;
  attachments: Attachment[];
  /** In a group, not addressed to hob: answered only when a note names hob. */
  overheard?: boolean;
  messageId?: string;
};

export type MessageHearingDeps = HearingDeps & {
  /** The bot's own user name, which a note may say instead of "hob". */
  botName?: string;
  /** In groups what the person is shown replies to their note. */
  inGroup: boolean;
  /** Shows the person what was heard (the outbox: it is never lost). */
  send(message: OutboundMessage): Promise<unknown>;
};

/**
 * Before a message's run: its voice notes are heard and leave its attachments; its text
 * becomes the caption (the only place a command was read from) followed by each framed
 * transcript. The person is shown what was heard, or why not. Returns whether the model has
 * anything to answer — and whether it was spoken to (for spoken answers). An overheard note
 * that does not name hob is dropped without a word. Throws only the AbortError of `signal`.
 */
export async function hearMessage(message: HearableMessage, deps: MessageHearingDeps, signal: AbortSignal): Promise<{ run: boolean; spokenTo: boolean }> {
  const notes = message.attachments.filter(isHearable);
  if (notes.length === 0) return { run: true, spokenTo: false };
  const others = message.attachments.filter((attachment) => !isHearable(attachment));
  const heard = await hearNotes(notes, deps, signal);
  if (message.overheard && !heard.transcripts.some((words) => namesHob(words, deps.botName))) {
    deps.logger.debug({ session: deps.sessionKey }, 'a voice note in a group did not name hob; not answered');
    return { run: false, spokenTo: false };
  }
  await deps.send({ text: heard.forPerson.join('\n'), plain: true, ...(deps.inGroup && message.messageId !== undefined ? { replyTo: message.messageId } : {}) });
  // What the person typed, without the frames hob put before it (a quoted reply, an edit).
  const typed = message.text.replace(/^(?:\[[^\]\n]*\]\s*)+/, '').trim();
  message.text = [message.text.trim(), ...heard.forModel].filter(Boolean).join('\n');
  message.attachments = others;
  return { run: heard.transcripts.length > 0 || typed !== '' || others.length > 0, spokenTo: heard.transcripts.length > 0 };
}

export type HeardNotes = {
  /** For the model, one per note: the framed transcript, or what became of a note not heard. */
  forModel: string[];
  /** For the person, one per note: the 🎤 line, or why it was not heard (where it is kept). */
  forPerson: string[];
  /** The transcripts of the notes heard (empty when none was). */
  transcripts: string[];
};

export type HearingDeps = {
  notes: VoiceNotes;
  workspace: string;
  logger: Logger;
  sessionKey: string;
};

/**
 * Hears each note: the platform's own size and length first (a note past the limits is not
 * downloaded), then saved in the inbox and transcribed. Never throws, except the AbortError
 * of a stopped run; each failure is a sentence for the person and a detail for the log.
 */
export async function hearNotes(notes: Attachment[], deps: HearingDeps, signal: AbortSignal): Promise<HeardNotes> {
  const heard: HeardNotes = { forModel: [], forPerson: [], transcripts: [] };
  for (const note of notes) {
    const refused = deps.notes.beforeDownload({ sizeBytes: note.sizeBytes, declaredSeconds: note.durationSeconds }) ?? tooLargeToFetch(note);
    if (refused) {
      heard.forPerson.push(refused);
      heard.forModel.push(`[The person sent a voice note, which was not transcribed; they were told: "${refused}"]`);
      continue;
    }
    let saved: { path: string; savedAs: string };
    try {
      saved = await saveInInbox(deps.workspace, note, await note.download());
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      deps.logger.warn({ session: deps.sessionKey, err: errorMessage(error) }, 'could not download a voice note');
      const sentence = "I couldn't download your voice note from the chat service. Please send it again, or type it.";
      heard.forPerson.push(sentence);
      heard.forModel.push(`[The person sent a voice note, but it could not be downloaded: ${errorMessage(error)}]`);
      continue;
    }
    const result = await deps.notes.hear({ ...saved, declaredSeconds: note.durationSeconds, hasVideo: note.kind === 'video' }, signal);
    heard.forPerson.push(result.forPerson);
    if (result.heard) {
      heard.forModel.push(result.forModel);
      heard.transcripts.push(result.transcript);
    } else {
      if (result.detail) deps.logger.warn({ session: deps.sessionKey, why: result.why, err: result.detail }, 'a voice note was not transcribed');
      heard.forModel.push(`[The person sent a voice note, kept at ${saved.savedAs}, which could not be transcribed; they were told: "${result.forPerson}"]`);
    }
  }
  return heard;
}

/** A note too big for hob to fetch at all, when the voice limits did not already say so. */
function tooLargeToFetch(note: Attachment): string | undefined {
  return note.sizeBytes !== undefined && note.sizeBytes > MAX_DOWNLOAD_BYTES ? tooBigSentence(note.sizeBytes, MAX_DOWNLOAD_BYTES) : undefined;
}
