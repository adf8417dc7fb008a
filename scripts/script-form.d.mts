export const SCRIPT_DIR: string;
export const SCRIPT_HEAD: string;
export function writeScriptForms(dir: string, banner: string): Promise<number>;
