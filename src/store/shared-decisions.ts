/**
 * Decisions taken in one hob process for a run waiting in another, on one database (issue 23):
 * an approval pressed, or a question answered, in a process that is not running the
 * conversation. The decision is written with the same "only if still open" rule as in the
 * process that waits, and that process is woken by a notice sent when the write commits.
 *
 * Only a store that several processes share has it (PostgreSQL); with SQLite there is one
 * process, the gateway gets none and nothing of this runs.
 */
import type { ApprovalDecisionValue } from './approvals.js';

/** A question a run asked its person, as any process sees it. */
export type SharedQuestion = {
  id: string;
  sessionKey: string;
  /** The one person who may answer. */
  askerId: string;
  platform: string;
  options: string[];
  createdAt: number;
};

export type SharedQuestionRow = SharedQuestion & {
  /** Set once: by the answer, or by the asking run giving up (timeout, stop); then `answer` may stay null. */
  closedAt: number | null;
  answer: string | null;
  answeredBy: string | null;
};

/**
 * What a notice woke: the approval or question with this id was decided in some process, or
 * (`stop`, the id a session key) someone asked to stop that conversation's run wherever it runs;
 * (`rules`, no id) someone's "always allow" rules changed; (`mode`, the id the mode) the owner
 * switched the permission mode; (`task`, the id a task's) a background task was stopped from a
 * process that does not run it.
 */
export type Woken = { kind: 'approval' | 'question' | 'stop' | 'rules' | 'mode' | 'task'; id: string };

export interface SharedDecisions {
  /**
   * Records an approval's decision if none was recorded yet and, in the same transaction,
   * wakes the process that waits for it; returns whether this call decided it.
   */
  decideApproval(id: string, decision: ApprovalDecisionValue, decidedBy: string, now: number): boolean;
  /** Records an open question, so a process that did not ask it can take its answer. */
  openQuestion(question: SharedQuestion): void;
  question(id: string): SharedQuestionRow | undefined;
  /** Answers the question if still open, waking the asking process; returns whether this call answered it. */
  answerQuestion(id: string, answer: string, answeredBy: string, now: number): boolean;
  /** The asking run stopped waiting (answered here, timed out, stopped): later answers are refused. */
  closeQuestion(id: string, now: number): void;
  /** `/stop` given in a process that is not running the conversation: the process that is stops its run. */
  requestStop(sessionKey: string): void;
  /** "Always allow" rules were added or taken back here (already stored): every process reads them again. */
  rulesChanged(): void;
  /** `/permissions mode` switched the mode here: every process takes it. */
  modeSwitched(mode: string): void;
  /** A task was stopped (its row ended) here while another process runs it: that process stops it now. */
  taskStopped(taskId: string): void;
  /**
   * Starts listening: `woken` for each decision taken anywhere (this process's own included),
   * `reconnected` after a lost connection came back — notices sent meanwhile are lost, so the
   * waiter reads again what it waits for.
   */
  listen(woken: (what: Woken) => void, reconnected: () => void): Promise<void>;
  close(): Promise<void>;
}
