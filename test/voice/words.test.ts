import { describe, expect, it } from 'vitest';
import { clock, secondsText, size } from '../../src/voice/measures.js';
import { failedSentence, heardLine } from '../../src/voice/words.js';

describe('the words around a voice note', () => {
  it('writes lengths as a clock and sizes in KB or MB', () => {
    expect([clock(0.4), clock(42), clock(600), clock(3725)]).toEqual(['0:00', '0:42', '10:00', '1:02:05']);
    expect([size(900), size(900_000), size(5_500_000), size(26_214_400)]).toEqual(['1 KB', '879 KB', '5.2 MB', '25 MB']);
    expect([secondsText(30), secondsText(300), secondsText(2_500), secondsText(180_000)]).toEqual(['0.03 s', '0.3 s', '2.5 s', '180 s']);
  });

  it('shows a long transcript cut at a word, on one line', () => {
    const said = `Remind me\nto ${'buy more oat milk and '.repeat(20)}eggs`;
    const line = heardLine(said);
    expect(line.startsWith('🎤 “Remind me to buy more oat milk')).toBe(true);
    expect(line.endsWith('…”')).toBe(true);
    expect(line).not.toContain('\n');
    expect(line.length).toBeLessThanOrEqual(245);
    expect(line.slice(0, -2)).toMatch(/\S$/);
  });

  it('asks for a retry only when one can help', () => {
    expect(failedSentence('timeout', 'inbox/a.ogg')).toBe(
      "I couldn't transcribe your voice note: the transcription service took too long to answer. It is saved as inbox/a.ogg. Please try again in a moment, or type it.",
    );
    expect(failedSentence('key', 'inbox/a.ogg')).toBe(
      "I couldn't transcribe your voice note: the transcription service refused hob's API key (the owner needs to check voice.api_key). It is saved as inbox/a.ogg. Please type it instead.",
    );
  });
});
