import { execFileSync } from 'node:child_process';

/**
 * Runs once before the suite: tests never see the developer's model keys or endpoints, and
 * the bundled CLI (dist/) that process-level tests spawn is fresh.
 */
export default function setup(): void {
  for (const name of Object.keys(process.env)) {
    if (name.startsWith('ANTHROPIC_') || name.startsWith('OPENAI_') || name.startsWith('HOB_VOICE_') || name === 'HOB_CONFIG') delete process.env[name];
  }
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}
