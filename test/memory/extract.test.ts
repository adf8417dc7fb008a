import { describe, expect, it } from 'vitest';
import { extractFacts } from '../../src/memory/extract.js';
import { transcriptForModel } from '../../src/voice/words.js';
import { testMemory } from './fixture.js';

describe('facts extracted by rules from what the person says', () => {
  it.each([
    ['The staging server is staging.acme.io.', ['host', 'environment']],
    ['Our NAS is at 192.168.1.20', ['host']],
    ['My notes live in ~/notes/inbox.md', ['path']],
    ['Production runs Postgres 16', ['environment', 'version']],
    ['The status endpoint is https://api.acme.io/health', ['endpoint', 'host']],
    ['Our code is at github.com/ann/hob', ['repository', 'host']],
    ['I prefer short answers without emoji', ['preference']],
    ["My daughter's teacher is Mrs Klein", ['personal']],
  ])('"%s" is saved with tags %j', (said, tags) => {
    expect(extractFacts(said).facts).toEqual([{ content: said.replace(/\.$/, ''), tags }]);
  });

  it.each([
    'Can you check staging.acme.io?',
    'ssh into db1 and restart nginx',
    'what is the weather in Rome',
    '/remember something',
    'thanks, that helps a lot',
    'My password is hunter2 on staging.acme.io',
    'The API key for prod is sk-123',
  ])('leaves "%s" alone (a question, a command, small talk, a secret)', (said) => {
    expect(extractFacts(said).facts).toEqual([]);
  });

  it("reads a voice note's transcript as the person's words, never the frame hob put around it", () => {
    const frame = transcriptForModel({ transcript: 'Our NAS is at 192.168.1.20', seconds: 3, savedAs: 'inbox/1733-voice.ogg' });
    expect(extractFacts(`[Bob] ${frame}`).facts).toEqual([{ content: 'Our NAS is at 192.168.1.20', tags: ['host'] }]);
    expect(extractFacts(transcriptForModel({ transcript: 'thanks, that helps', savedAs: 'inbox/1733-voice.ogg' })).facts).toEqual([]);
  });

  it('takes "call me …" as the preferred name, in several languages', () => {
    expect(extractFacts('Hi! Call me Annie, please.').name).toBe('Annie');
    expect(extractFacts('Ich heiße Jonas').name).toBe('Jonas');
    expect(extractFacts('mi chiamo Giulia').name).toBe('Giulia');
    const said = ['call me', 'my name is', "I'm called", 'im called', 'nennt mich', 'nenn mich', 'ich heiße', 'ich heisse', 'chiamami', 'mi chiamo', 'appelle-moi', "je m'appelle", 'llámame', 'me llamo'];
    for (const words of said) {
      expect(extractFacts(`${words} Robin`).name, words).toBe('Robin');
      expect(extractFacts(`${words.toUpperCase()} Robin`).name, words.toUpperCase()).toBe('Robin');
    }
    // A name said there is the name, not a fact about "my name".
    expect(extractFacts('My name is Robin Hood').facts).toEqual([]);
    expect(extractFacts('My favourite editor is Helix').facts).toEqual([{ content: 'My favourite editor is Helix', tags: ['personal'] }]);
  });

  it('saves extracted facts as entries of the speaker, shown and deletable like any other, and can be switched off', () => {
    const { memory } = testMemory();
    memory.observe('telegram:42', '42', 'Call me Annie. The staging server is staging.acme.io.');
    const [entry] = memory.entries.list('telegram:42');
    expect(entry).toMatchObject({ content: 'The staging server is staging.acme.io', source: 'extracted', tags: ['host', 'environment'] });
    expect(memory.profiles.get('telegram:42').name).toBe('Annie');
    // Said again: known already, not a second entry.
    memory.observe('telegram:42', '42', 'the staging server is staging.acme.io');
    expect(memory.entries.count('telegram:42')).toBe(1);
    expect(memory.forget('telegram:42', entry?.id ?? '')).toBe(true);

    const off = testMemory({ extract: 'off' }).memory;
    off.observe('telegram:42', '42', 'Call me Annie. The staging server is staging.acme.io.');
    expect(off.entries.count('telegram:42')).toBe(0);
    expect(off.profiles.get('telegram:42')).toEqual({});
  });
});
