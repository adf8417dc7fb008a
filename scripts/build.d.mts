import type { BuildOptions } from 'esbuild';

export const ENTRY_POINTS: Record<string, string>;
export function bundleOptions(entryPoints: Record<string, string>, outdir: string): BuildOptions;
