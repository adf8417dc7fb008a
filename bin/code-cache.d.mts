export const IMPORT: unique symbol;
export const FLAGS_CHANGED: unique symbol;
export function canCache(): boolean;
export function importWithCodeCache(entry: string, cacheDir: string, options?: { writeAfterMs?: number }): Promise<void>;
