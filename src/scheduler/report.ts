import { errorMessage } from '../core/errors.js';
import { platformOf } from '../core/person.js';
import type { Block } from '../core/messages.js';
import type { QueryEngine } from '../engine/query-engine.js';
import type { Interaction } from '../policy/types.js';
import type { Job } from '../store/job.js';
import type { ReportRunner } from './runner.js';

/**
 * Reports run as headless agent turns in the job's own session (`job:<id>`, fresh each run):
 * nobody is asked anything. A call that would need an approval is denied, and the report
 * says what was not done and why. The time limit is the signal the runner passes in.
 * `full_auto` applies only when whoever made the job is on allow_from (`isTrusted`; by
 * default only the terminal's person), as in a chat.
 */
export function reportRunner(engineFor: (sessionKey: string) => QueryEngine, isTrusted: (platform: string, userId: string) => boolean = (platform) => platform === 'console'): ReportRunner {
  return async (job: Job, signal: AbortSignal) => {
    const denied: string[] = [];
    const interaction: Interaction = {
      trusted: isTrusted(platformOf(job.originSession), job.createdBy),
      confirm: async (request) => {
        denied.push(request.summary);
        return 'deny';
      },
      choose: async () => '(this is a scheduled report: nobody is here to answer; continue without an answer)',
    };
    try {
      const engine = engineFor(`job:${job.id}`);
      engine.reset();
      let answer = '';
      let failed: string | undefined;
      let reason = 'error';
      for await (const event of engine.submit(job.text, { userId: job.createdBy, interaction, signal, interactive: false })) {
        switch (event.type) {
          case 'assistant_message': {
            const text = textOf(event.message.content);
            if (text) answer = text;
            break;
          }
          case 'error':
            failed = event.detail ?? event.message;
            break;
          case 'done':
            reason = event.reason;
            break;
          default:
            break;
        }
      }
      if (signal.aborted) return { ok: false, error: 'it was stopped (time limit or shutdown)' };
      if (reason !== 'end_turn') return { ok: false, error: failed ?? `the run ended with ${reason}` };
      const refusals = denied.length
        ? `\n\n(Not done: ${denied.map((summary) => `"${summary}"`).join(', ')} needed an approval, and nobody is asked during a scheduled report. An "always allow" rule lets reports use it.)`
        : '';
      return { ok: true, text: `${answer || '(The report produced no text.)'}${refusals}` };
    } catch (error) {
      return { ok: false, error: errorMessage(error) };
    }
  };
}

function textOf(blocks: Block[]): string {
  return blocks
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join('')
    .trim();
}
