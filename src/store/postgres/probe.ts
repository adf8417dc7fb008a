import { newPgClient } from './pg-client.js';

/**
 * Whether the database answers now, on a short connection of its own (asynchronous: a health
 * check must not hold the process the way a bridged query would while the server is away).
 */
export async function postgresAnswers(url: string, timeoutMs = 2000): Promise<boolean> {
  const client = await newPgClient({ connectionString: url, application_name: 'hob-health', connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  // A connection lost while probing is a "no", told by the rejected promise below.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
