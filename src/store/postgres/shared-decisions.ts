/**
 * SharedDecisions on PostgreSQL (the port: ../shared-decisions.ts): the decision and its
 * `pg_notify` run in one transaction on the bridge, so the notice goes out only when the
 * decision is committed; notices are heard on the listener's own connection.
 */
import type { ApprovalDecisionValue } from '../approvals.js';
import type { SharedDecisions, SharedQuestion, SharedQuestionRow, Woken } from '../shared-decisions.js';
import type { Store } from '../store.js';
import { PostgresListener } from './notifications.js';
import { Sql } from './sql.js';
import { PostgresStore } from './store.js';

/**
 * The one channel every process listens on; the payload is `approval:<id>`, `question:<id>`,
 * `stop:<session key>`, `rules:*`, `mode:<mode>` or `task:<task id>`.
 */
const CHANNEL = 'hob_decisions';

const QUESTION = `id, session_key "sessionKey", asker_id "askerId", platform, options, created_at "createdAt", closed_at "closedAt", answer, answered_by "answeredBy"`;

/** The store's shared decisions when it is PostgreSQL, else undefined (one process: nothing to share). */
export function sharedDecisionsOf(store: Store, url: () => string, onError: (error: Error) => void): SharedDecisions | undefined {
  return store instanceof PostgresStore ? new PostgresSharedDecisions(new Sql(store.bridge), url(), onError) : undefined;
}

export class PostgresSharedDecisions implements SharedDecisions {
  private readonly listener: PostgresListener;
  private reconnected: () => void = () => undefined;

  constructor(
    private readonly sql: Sql,
    url: string,
    onError: (error: Error) => void,
  ) {
    this.listener = new PostgresListener({ url, onError, onReconnect: () => this.reconnected() });
  }

  decideApproval(id: string, decision: ApprovalDecisionValue, decidedBy: string, now: number): boolean {
    return this.sql.transaction(() => {
      const decided = this.sql.run('UPDATE approvals SET decision = ?, decided_by = ?, decided_at = ? WHERE id = ? AND decision IS NULL', decision, decidedBy, now, id) === 1;
      if (decided) this.notify('approval', id);
      return decided;
    });
  }

  openQuestion(question: SharedQuestion): void {
    this.sql.run(
      'INSERT INTO questions (id, session_key, asker_id, platform, options, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      question.id, question.sessionKey, question.askerId, question.platform, JSON.stringify(question.options), question.createdAt,
    );
  }

  question(id: string): SharedQuestionRow | undefined {
    const row = this.sql.get<Omit<SharedQuestionRow, 'options'> & { options: string }>(`SELECT ${QUESTION} FROM questions WHERE id = ?`, id);
    return row && { ...row, options: JSON.parse(row.options) as string[] };
  }

  answerQuestion(id: string, answer: string, answeredBy: string, now: number): boolean {
    return this.sql.transaction(() => {
      const answered = this.sql.run('UPDATE questions SET answer = ?, answered_by = ?, closed_at = ? WHERE id = ? AND closed_at IS NULL', answer, answeredBy, now, id) === 1;
      if (answered) this.notify('question', id);
      return answered;
    });
  }

  closeQuestion(id: string, now: number): void {
    this.sql.run('UPDATE questions SET closed_at = ? WHERE id = ? AND closed_at IS NULL', now, id);
  }

  requestStop(sessionKey: string): void {
    this.notify('stop', sessionKey);
  }

  rulesChanged(): void {
    this.notify('rules', '*');
  }

  modeSwitched(mode: string): void {
    this.notify('mode', mode);
  }

  taskStopped(taskId: string): void {
    this.notify('task', taskId);
  }

  async listen(woken: (what: Woken) => void, reconnected: () => void): Promise<void> {
    this.reconnected = reconnected;
    await this.listener.listen(CHANNEL, (payload) => {
      const match = /^(approval|question|stop|rules|mode|task):(.+)$/.exec(payload);
      if (match) woken({ kind: match[1] as Woken['kind'], id: match[2] as string });
    });
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  /** Inside the caller's transaction: sent when it commits, dropped if it rolls back. */
  private notify(kind: Woken['kind'], id: string): void {
    this.sql.get('SELECT pg_notify(?, ?)', CHANNEL, `${kind}:${id}`);
  }
}
