export const SCRIPT_DIR: string;
export function writeScriptForms(dir: string, banner: string): Promise<number>;
