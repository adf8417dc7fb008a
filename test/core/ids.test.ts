import { describe, expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';

/** Session ids name each conversation's rows: two people must never share one, past the random pool's refills too. */
describe('newId', () => {
  it('gives every new session its own URL-safe id, across many more than one fill of randomness', () => {
    const ids = Array.from({ length: 1000 }, () => newId('ses'));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^ses_[0-9a-z]+[A-Za-z0-9_-]{8}$/);
  });
});
