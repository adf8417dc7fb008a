/** Import first in any test that builds SDK clients: clears model keys and endpoints. */
for (const name of Object.keys(process.env)) {
  if (name.startsWith('ANTHROPIC_') || name.startsWith('OPENAI_') || name.startsWith('HOB_VOICE_') || name === 'HOB_CONFIG') delete process.env[name];
}
export {};
