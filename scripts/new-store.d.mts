export const NEW_STORE: string;
export function writeNewStore(outdir: string): Promise<boolean>;
