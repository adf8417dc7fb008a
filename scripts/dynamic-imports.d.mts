export const IMPORT_BANNER: string;
export function routeDynamicImports(dir: string): Promise<number>;
