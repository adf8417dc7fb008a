/**
 * Working memory: what the conversation is doing right now, in small bounded buckets filled
 * after each tool call. It is saved with the session, restored on resume, and carried across
 * compaction, so a summarized conversation still knows its task, its files and its next step.
 */

export type WorkingMemoryState = {
  /** The person's current request, and the few before it. */
  taskFocus: { goal: string; recentGoals: string[] };
  /** Files and URLs the run read or changed, newest last. */
  recentFiles: string[];
  /** One line per tool call: what ran and how it ended. */
  workLog: string[];
  /** Changes that were made and checked (a write, an edit, a command that succeeded). */
  verifiedWork: string[];
};

export const WORKING_MEMORY_LIMITS = { recentGoals: 5, recentFiles: 8, workLog: 10, verifiedWork: 10, lineChars: 200 } as const;

const CHANGING_TOOLS = new Set(['write_file', 'edit_file']);

export class WorkingMemory {
  private state: WorkingMemoryState = emptyState();

  /** Restores a saved state; anything unreadable starts empty rather than failing the session. */
  static fromJSON(json: string | null | undefined): WorkingMemory {
    const memory = new WorkingMemory();
    if (!json) return memory;
    try {
      const parsed = JSON.parse(json) as Partial<WorkingMemoryState>;
      memory.state = {
        taskFocus: {
          goal: typeof parsed.taskFocus?.goal === 'string' ? parsed.taskFocus.goal : '',
          recentGoals: strings(parsed.taskFocus?.recentGoals),
        },
        recentFiles: strings(parsed.recentFiles),
        workLog: strings(parsed.workLog),
        verifiedWork: strings(parsed.verifiedWork),
      };
    } catch {
      // A damaged row loses only the working notes; the history itself is intact.
    }
    return memory;
  }

  toJSON(): string {
    return JSON.stringify(this.state);
  }

  get snapshot(): Readonly<WorkingMemoryState> {
    return this.state;
  }

  get isEmpty(): boolean {
    const { taskFocus, recentFiles, workLog, verifiedWork } = this.state;
    return !taskFocus.goal && recentFiles.length === 0 && workLog.length === 0 && verifiedWork.length === 0;
  }

  /** A new request from the person becomes the task focus. */
  rememberGoal(request: string): void {
    const goal = clip(request.replace(/\s+/g, ' ').trim());
    if (!goal) return;
    this.state.taskFocus.goal = goal;
    appendCappedUnique(this.state.taskFocus.recentGoals, goal, WORKING_MEMORY_LIMITS.recentGoals);
  }

  /** After a tool call: files in play, the work log, and what was verifiably done. */
  recordTool(name: string, input: unknown, result: { content: string; isError: boolean }): void {
    const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
    const path = typeof fields.path === 'string' ? fields.path : undefined;
    const url = typeof fields.url === 'string' ? fields.url : undefined;
    const command = typeof fields.command === 'string' ? fields.command : undefined;
    const target = path ?? url ?? command ?? '';
    if (!result.isError && (path || url)) {
      appendCappedUnique(this.state.recentFiles, (path ?? url) as string, WORKING_MEMORY_LIMITS.recentFiles);
    }
    const outcome = result.isError ? `failed: ${firstLine(result.content)}` : 'ok';
    appendCapped(this.state.workLog, clip(`${name}${target ? ` ${target}` : ''} → ${outcome}`), WORKING_MEMORY_LIMITS.workLog);
    if (!result.isError && (CHANGING_TOOLS.has(name) || (name === 'bash' && command))) {
      appendCappedUnique(this.state.verifiedWork, clip(`${name} ${target}`.trim()), WORKING_MEMORY_LIMITS.verifiedWork);
    }
  }

  clear(): void {
    this.state = emptyState();
  }

  /** The carried state as the model reads it after a compaction. */
  render(): string {
    if (this.isEmpty) return '';
    const { taskFocus, recentFiles, workLog, verifiedWork } = this.state;
    const lines = ['<carried-state>'];
    if (taskFocus.goal) lines.push(`Task in progress (the person's latest request): ${taskFocus.goal}`);
    const earlier = taskFocus.recentGoals.filter((goal) => goal !== taskFocus.goal);
    if (earlier.length) lines.push('Earlier requests:', ...earlier.map((goal) => `- ${goal}`));
    if (recentFiles.length) lines.push('Files in play:', ...recentFiles.map((file) => `- ${file}`));
    if (verifiedWork.length) lines.push('Done and verified:', ...verifiedWork.map((line) => `- ${line}`));
    if (workLog.length) lines.push('Recent steps (oldest first):', ...workLog.map((line) => `- ${line}`));
    lines.push('Continue from the next unfinished step; do not redo what is listed as done.', '</carried-state>');
    return lines.join('\n');
  }
}

function emptyState(): WorkingMemoryState {
  return { taskFocus: { goal: '', recentGoals: [] }, recentFiles: [], workLog: [], verifiedWork: [] };
}

function appendCappedUnique(bucket: string[], value: string, limit: number): void {
  const at = bucket.indexOf(value);
  if (at >= 0) bucket.splice(at, 1);
  appendCapped(bucket, value, limit);
}

function appendCapped(bucket: string[], value: string, limit: number): void {
  bucket.push(value);
  if (bucket.length > limit) bucket.splice(0, bucket.length - limit);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function clip(value: string): string {
  return value.length > WORKING_MEMORY_LIMITS.lineChars ? `${value.slice(0, WORKING_MEMORY_LIMITS.lineChars - 1)}…` : value;
}

function firstLine(value: string): string {
  return (value.split('\n').find((line) => line.trim()) ?? '').trim();
}
