import { httpDate, isNotModified, strongEtag } from './conditional-get';

describe('conditional GET (RFC 9110 §13)', () => {
  const lastModified = new Date('2026-05-01T10:20:30.456Z');
  const etag = strongEtag('usr_1', lastModified.toISOString(), ['profile:read'], 'client-a');

  it('derives distinct strong tags from distinct representations', () => {
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(strongEtag('usr_1', lastModified.toISOString(), ['profile:read'], 'client-b')).not.toBe(etag);
    expect(strongEtag('usr_1', lastModified.toISOString(), ['profile:read'], 'client-a')).toBe(etag);
  });

  it('formats Last-Modified truncated to the second', () => {
    expect(httpDate(lastModified)).toBe('Fri, 01 May 2026 10:20:30 GMT');
  });

  it('matches If-None-Match, in a list, weakly, and *', () => {
    expect(isNotModified({ 'if-none-match': etag }, { etag, lastModified })).toBe(true);
    expect(isNotModified({ 'if-none-match': `"other", ${etag}` }, { etag, lastModified })).toBe(true);
    expect(isNotModified({ 'if-none-match': `W/${etag}` }, { etag, lastModified })).toBe(true);
    expect(isNotModified({ 'if-none-match': '*' }, { etag, lastModified })).toBe(true);
    expect(isNotModified({ 'if-none-match': '"other"' }, { etag, lastModified })).toBe(false);
  });

  it('lets If-None-Match win over If-Modified-Since (§13.2.2)', () => {
    const later = httpDate(new Date('2030-01-01T00:00:00Z'));
    expect(
      isNotModified({ 'if-none-match': '"other"', 'if-modified-since': later }, { etag, lastModified }),
    ).toBe(false);
  });

  it('compares If-Modified-Since at one-second precision', () => {
    expect(
      isNotModified({ 'if-modified-since': 'Fri, 01 May 2026 10:20:30 GMT' }, { etag, lastModified }),
    ).toBe(true);
    expect(
      isNotModified({ 'if-modified-since': 'Fri, 01 May 2026 10:20:29 GMT' }, { etag, lastModified }),
    ).toBe(false);
    expect(isNotModified({ 'if-modified-since': 'not a date' }, { etag, lastModified })).toBe(false);
  });
});
