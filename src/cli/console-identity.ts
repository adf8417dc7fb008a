import { userInfo } from 'node:os';

/** The terminal's person: the OS user, who owns this hob. */
export function consoleUserId(): string {
  try {
    return userInfo().username;
  } catch {
    return 'local';
  }
}

export const consoleSessionKey = (): string => `console:${consoleUserId()}`;
