import { describe, expect, it } from 'vitest';
import { withoutSecrets } from '../../src/policy/child-env.js';

describe('shell environment', () => {
  it('keeps model keys and bot tokens out of commands the model runs', () => {
    const env = withoutSecrets({
      PATH: '/usr/bin',
      HOME: '/home/ann',
      ANTHROPIC_API_KEY: 'sk-ant',
      OPENAI_BASE_URL: 'http://x',
      TELEGRAM_BOT_TOKEN: '1:abc',
      GITHUB_TOKEN: 'ghp',
      AWS_SECRET_ACCESS_KEY: 'x',
      HOB_CONFIG: '/c.yaml',
    });
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/ann' });
  });
});
