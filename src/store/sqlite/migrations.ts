/** Schema migrations, applied in order; never edit a released one, append a new one. */
export const migrations: string[] = [
  /* 1: conversations */ `
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX sessions_key ON sessions(session_key, active);

  CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX messages_session ON messages(session_id, id);

  CREATE TABLE usage (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX usage_session ON usage(session_id);

  CREATE TABLE permission_rules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    command TEXT,
    path_prefix TEXT,
    created_at INTEGER NOT NULL,
    UNIQUE (user_id, tool_name, command, path_prefix)
  ) STRICT;
  `,
  /* 2: gateway — approvals, delivery outbox, pairing, inbound updates */ `
  CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    tool_use_id TEXT NOT NULL,
    requester_id TEXT NOT NULL,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    thread_id TEXT,
    message_id TEXT,
    tool_name TEXT NOT NULL,
    input TEXT NOT NULL,
    summary TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    decision TEXT CHECK (decision IN ('allow_once', 'allow_always', 'deny', 'timeout', 'cancelled')),
    decided_by TEXT,
    decided_at INTEGER
  ) STRICT;
  CREATE INDEX approvals_pending ON approvals(decision, expires_at);

  CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    thread_id TEXT,
    session_key TEXT,
    message TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    platform_message_id TEXT,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    sent_at INTEGER
  ) STRICT;
  CREATE INDEX outbox_pending ON outbox(status, next_attempt_at);

  CREATE TABLE pairings (
    code TEXT PRIMARY KEY,
    platform TEXT NOT NULL,
    user_id TEXT NOT NULL,
    user_name TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'revoked', 'expired')),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    decided_by TEXT,
    decided_at INTEGER
  ) STRICT;
  CREATE INDEX pairings_user ON pairings(platform, user_id, status);

  CREATE TABLE inbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    platform TEXT NOT NULL,
    update_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    message TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'done')),
    created_at INTEGER NOT NULL,
    UNIQUE (platform, update_id)
  ) STRICT;
  CREATE INDEX inbox_queued ON inbox(status, id);
  `,
  /* 3: split messages resume where they broke off; approvals know their prompt's delivery */ `
  ALTER TABLE outbox ADD COLUMN parts_sent INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE approvals ADD COLUMN outbox_id INTEGER;
  `,
  /* 4: a run in flight is marked, so a restart resumes only runs a crash cut off */ `
  ALTER TABLE sessions ADD COLUMN running INTEGER NOT NULL DEFAULT 0;
  `,
  /* 5: parts of one message stay together across a restart; per-chat outbox order is cheap */ `
  ALTER TABLE inbox ADD COLUMN batch INTEGER;
  CREATE INDEX outbox_chat_pending ON outbox(platform, chat_id, status, id);
  `,
  /* issue 8: people (linked identities), long-term memory with its full-text index, profiles */ `
  CREATE TABLE person_links (
    platform TEXT NOT NULL,
    user_id TEXT NOT NULL,
    person_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (platform, user_id)
  ) STRICT;
  CREATE INDEX person_links_person ON person_links(person_id);

  CREATE TABLE link_codes (
    code TEXT PRIMARY KEY,
    person_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE memory_entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    person_id TEXT NOT NULL,
    title TEXT,
    content TEXT NOT NULL,
    content_key TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    source TEXT NOT NULL CHECK (source IN ('tool', 'command', 'extracted', 'import')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    last_used_at INTEGER,
    use_count INTEGER NOT NULL DEFAULT 0,
    embedded INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  CREATE INDEX memory_person ON memory_entries(person_id, updated_at);
  CREATE INDEX memory_person_key ON memory_entries(person_id, content_key);
  CREATE INDEX memory_person_used ON memory_entries(person_id, use_count DESC, last_used_at DESC);
  CREATE INDEX memory_unembedded ON memory_entries(embedded) WHERE embedded = 0;

  -- owner: one token per person, so a search reads only that person's postings.
  CREATE VIRTUAL TABLE memory_fts USING fts5(title, content, tags, owner, tokenize = 'porter unicode61 remove_diacritics 2');
  INSERT INTO memory_fts (memory_fts, rank) VALUES ('rank', 'bm25(2.0, 1.0, 1.5, 0.0)');

  CREATE TABLE profiles (
    person_id TEXT PRIMARY KEY,
    name TEXT,
    timezone TEXT,
    language TEXT,
    style TEXT,
    notes TEXT,
    updated_at INTEGER NOT NULL
  ) STRICT;
  `,
  /* issue 11: scheduled jobs (reminders, reports) and their runs, each claimed once */ `
  CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL,
    created_by TEXT NOT NULL,
    origin_session TEXT NOT NULL,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    thread_id TEXT,
    kind TEXT NOT NULL CHECK (kind IN ('reminder', 'report')),
    text TEXT NOT NULL,
    schedule_kind TEXT NOT NULL CHECK (schedule_kind IN ('at', 'every', 'cron')),
    schedule TEXT NOT NULL,
    timezone TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    next_run_at INTEGER,
    last_run_at INTEGER,
    last_status TEXT,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX jobs_due ON jobs(next_run_at) WHERE enabled = 1 AND next_run_at IS NOT NULL;
  CREATE INDEX jobs_owner ON jobs(owner_id);

  CREATE TABLE job_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL,
    scheduled_for INTEGER NOT NULL,
    claimed_at INTEGER NOT NULL,
    runner TEXT NOT NULL,
    lease_until INTEGER NOT NULL,
    late INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL CHECK (status IN ('claimed', 'running', 'handed', 'failed', 'interrupted')),
    outbox_id INTEGER,
    error TEXT,
    finished_at INTEGER,
    UNIQUE (job_id, scheduled_for)
  ) STRICT;
  CREATE INDEX job_runs_open ON job_runs(lease_until) WHERE status IN ('claimed', 'running');
  `,
  /* issue 13: sessions belong to a person (title, working memory); compaction boundaries; full-text search of messages */ `
  ALTER TABLE sessions ADD COLUMN person_id TEXT;
  ALTER TABLE sessions ADD COLUMN title TEXT;
  ALTER TABLE sessions ADD COLUMN working_memory TEXT;
  CREATE INDEX sessions_person ON sessions(person_id, updated_at);
  CREATE TABLE compactions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    through_message_id INTEGER NOT NULL,
    messages TEXT NOT NULL,
    trigger TEXT NOT NULL,
    level INTEGER NOT NULL,
    tokens_before INTEGER NOT NULL,
    tokens_after INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX compactions_session ON compactions(session_id, id);
  CREATE VIRTUAL TABLE messages_fts USING fts5(text, person_id UNINDEXED, session_id UNINDEXED, role UNINDEXED, tokenize = 'porter unicode61');
  `,
  /* issue 16: wrong /link codes are counted in the database, per person and per live code */ `
  ALTER TABLE link_codes ADD COLUMN wrong_tries INTEGER NOT NULL DEFAULT 0;
  CREATE TABLE link_failures (
    person_id TEXT NOT NULL,
    at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX link_failures_person ON link_failures(person_id, at);
  `,
  /* issue 17: what each model's token counts taught the estimate, kept across restarts */ `
  CREATE TABLE token_calibration (
    model TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  `,
  /* issue 18: live messages are recorded as they start ('live'; 'withdrawn' once removed); a send cut off (a crash, a timeout) is looked up before it is sent again */ `
  CREATE TABLE outbox_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    thread_id TEXT,
    session_key TEXT,
    message TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'live', 'withdrawn')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    platform_message_id TEXT,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    sent_at INTEGER,
    parts_sent INTEGER NOT NULL DEFAULT 0,
    unconfirmed INTEGER NOT NULL DEFAULT 0,
    attempted_at INTEGER,
    preview TEXT
  ) STRICT;
  INSERT INTO outbox_new (id, platform, chat_id, thread_id, session_key, message, status, attempts, next_attempt_at, platform_message_id, last_error, created_at, sent_at, parts_sent, unconfirmed, attempted_at)
    SELECT id, platform, chat_id, thread_id, session_key, message, status, attempts, next_attempt_at, platform_message_id, last_error, created_at, sent_at, parts_sent,
      CASE WHEN status = 'pending' AND attempts > 0 THEN 1 ELSE 0 END, CASE WHEN attempts > 0 THEN created_at END FROM outbox;
  DROP TABLE outbox;
  ALTER TABLE outbox_new RENAME TO outbox;
  CREATE INDEX outbox_pending ON outbox(status, next_attempt_at);
  CREATE INDEX outbox_chat_pending ON outbox(platform, chat_id, status, id);
  `,
  /* issue 21: background tasks and workers (agent calls): whose they are, where their result goes, what they cost */ `
  CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('task', 'worker')),
    person_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    origin_session TEXT NOT NULL,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    thread_id TEXT,
    agent TEXT,
    description TEXT NOT NULL,
    prompt TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'stopped', 'interrupted')),
    runner TEXT,
    result TEXT,
    error TEXT,
    tool_uses INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    outbox_id INTEGER,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    noted_at INTEGER
  ) STRICT;
  CREATE INDEX tasks_person ON tasks(person_id, created_at);
  CREATE INDEX tasks_open ON tasks(status) WHERE status IN ('queued', 'running');
  CREATE INDEX tasks_unnoted ON tasks(origin_session) WHERE kind = 'task' AND noted_at IS NULL;
  `,
  /* issue 23: a background task's claim expires with its lease, so another process can take over a task whose process died */ `
  ALTER TABLE tasks ADD COLUMN lease_until INTEGER;
  `,
  /* issue 20: a message's search row waits here, in the message's commit, and reaches messages_fts in batches (message-index.ts) */ `
  CREATE TABLE messages_fts_waiting (
    message_id INTEGER PRIMARY KEY,
    text TEXT NOT NULL,
    person_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL
  ) STRICT;
  `,
];
