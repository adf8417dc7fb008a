/** Runs once before the suite: tests never see the developer's model keys or endpoints. */
export default function setup(): void {
  for (const name of Object.keys(process.env)) {
    if (name.startsWith('ANTHROPIC_') || name.startsWith('OPENAI_')) delete process.env[name];
  }
}
