import { newRequestId, pickRequestId } from './bootstrap';

describe('pickRequestId', () => {
  it('keeps a well-formed incoming id', () => {
    expect(pickRequestId('abc.DEF_1:2-3')).toBe('abc.DEF_1:2-3');
    expect(pickRequestId('x'.repeat(128))).toBe('x'.repeat(128));
  });

  it.each([['has space'], ['x'.repeat(129)], [''], ['semi;colon'], ['ünïcode']])('replaces %j', (bad) => {
    const id = pickRequestId(bad);
    expect(id).not.toBe(bad);
    expect(id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
  });

  it('creates a fresh id when none came', () => {
    expect(pickRequestId(undefined)).toMatch(/^req_/);
    expect(pickRequestId(undefined)).not.toBe(pickRequestId(undefined));
  });
});

describe('newRequestId', () => {
  it('never repeats across many refills of its random pool', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newRequestId()));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
  });
});
