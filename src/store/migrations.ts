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
];
