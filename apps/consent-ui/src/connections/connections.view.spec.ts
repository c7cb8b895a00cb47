import { disconnectPath, formatUtc } from './connections.view';

describe('formatUtc', () => {
  it('writes the date and time in UTC, whatever the offset of the input', () => {
    expect(formatUtc('2026-03-05T14:05:09.000Z')).toBe('5 March 2026, 14:05 UTC');
    expect(formatUtc('2026-12-31T23:30:00-02:00')).toBe('1 January 2027, 01:30 UTC');
  });

  it('shows unparseable text as it is', () => {
    expect(formatUtc('yesterday')).toBe('yesterday');
  });
});

describe('disconnectPath', () => {
  it('encodes the client id as one path segment', () => {
    expect(disconnectPath('a/b c')).toBe('/account/connections/a%2Fb%20c/disconnect');
  });
});
