import { HobError } from '../../core/errors.js';

/**
 * Where a `store.url` points, without its password: the part every message may name. The
 * password is kept apart (`password`) only so it can be scrubbed from a server's words.
 */
export type PostgresTarget = { host: string; port: number; user: string; database: string; password: string };

/** A PostgreSQL store failure, in words that name the problem and the fix. Never carries a password. */
export class PostgresStoreError extends HobError {
  override name = 'PostgresStoreError';
  constructor(
    message: string,
    /** The SQLSTATE (e.g. `23505`) or the network code (e.g. `ECONNREFUSED`), when there is one. */
    readonly code?: string,
  ) {
    super(message);
  }
}

const USAGE = 'expected postgres://USER:PASSWORD@HOST:PORT/DATABASE';

/** Reads `store.url`; a URL that is not one names the expected form (and never echoes a password). */
export function parseStoreUrl(url: string): PostgresTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PostgresStoreError(`store.url is not a URL (${USAGE}).`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new PostgresStoreError(`store.url must start with postgres:// (${USAGE}); it starts with ${parsed.protocol}//.`);
  }
  // A unix socket folder may come as ?host=/run/postgresql, as libpq allows.
  const host = parsed.searchParams.get('host') ?? decodeURIComponent(parsed.hostname);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  const user = decodeURIComponent(parsed.username);
  if (!host) throw new PostgresStoreError(`store.url names no host (${USAGE}).`);
  return { host, port: parsed.port ? Number(parsed.port) : 5432, user, database: database || user, password: decodeURIComponent(parsed.password) };
}

/** "127.0.0.1:5432", or the socket folder. */
export function describeTarget(target: PostgresTarget): string {
  return target.host.startsWith('/') ? `${target.host} (socket, port ${target.port})` : `${target.host}:${target.port}`;
}

/** What a failure from the driver carries (a DatabaseError, or a Node network error). */
export type DriverFailure = { message: string; code?: string; detail?: string };

/**
 * A driver failure in words: the common ways a store.url goes wrong each say what to check;
 * anything else keeps the server's own message and SQLSTATE. The password, if the server
 * or the driver echoed it, is replaced by ***.
 */
export function describeFailure(failure: DriverFailure, target: PostgresTarget, context: { statementTimeoutMs: number; sql?: string }): PostgresStoreError {
  const where = `PostgreSQL at ${describeTarget(target)}`;
  const words = (text: string) => redact(text, target.password);
  switch (failure.code) {
    case 'ECONNREFUSED':
      return new PostgresStoreError(`${where} refused the connection; check store.url (is the server running and listening there?).`, failure.code);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new PostgresStoreError(`The PostgreSQL host "${target.host}" could not be found; check store.url.`, failure.code);
    case 'ETIMEDOUT':
    case 'CONNECT_TIMEOUT':
      return new PostgresStoreError(`${where} did not answer the connection in time; check store.url and the network.`, failure.code);
    case '28P01':
    case '28000':
      return new PostgresStoreError(`${where} did not let user "${target.user}" in (${words(failure.message)}); check the user and password in store.url.`, failure.code);
    case '3D000':
      return new PostgresStoreError(`${where} has no database "${target.database}"; create it (createdb -O ${target.user || 'USER'} ${target.database}) or fix store.url.`, failure.code);
    case '57014':
      return new PostgresStoreError(
        `A PostgreSQL statement ran longer than ${context.statementTimeoutMs / 1000} s and was cancelled (statement_timeout)${context.sql ? `: ${sqlHead(context.sql)}` : ''}.`,
        failure.code,
      );
    case '57P01':
    case '57P02':
    case '57P03':
      return new PostgresStoreError(`${where} ended the connection (${words(failure.message)}); hob connects again.`, failure.code);
    default: {
      const detail = failure.detail ? ` (${words(failure.detail)})` : '';
      const statement = context.sql ? ` in: ${sqlHead(context.sql)}` : '';
      return new PostgresStoreError(`PostgreSQL: ${words(failure.message)}${detail}${failure.code ? ` [${failure.code}]` : ''}${statement}`, failure.code);
    }
  }
}

/** The first words of a statement, enough to recognise it in a log. */
function sqlHead(sql: string): string {
  const line = sql.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/** Scrubs a password and any URL's password out of a text. */
export function redact(text: string, password: string): string {
  let scrubbed = text.replace(/(postgres(?:ql)?:\/\/[^:/@\s]*:)[^@\s]*@/gi, '$1***@');
  if (password) scrubbed = scrubbed.split(password).join('***');
  return scrubbed;
}
