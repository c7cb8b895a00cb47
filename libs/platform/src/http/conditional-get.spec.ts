import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerConditionally, httpDate, isNotModified, strongEtag } from './conditional-get';

function fakeReply() {
  const headers: Record<string, string> = {};
  let status = 200;
  const reply = {
    header(name: string, value: string) {
      headers[name] = value;
      return reply;
    },
    status(code: number) {
      status = code;
      return reply;
    },
    type(value: string) {
      headers['content-type'] = value;
      return reply;
    },
  };
  return { reply: reply as unknown as FastifyReply, headers, status: () => status };
}

const representation = {
  body: () => ({ ok: true }),
  etag: '"abc"',
  lastModified: new Date('2026-01-31T12:00:00.900Z'),
};
const request = (headers: Record<string, string>) => ({ headers }) as unknown as FastifyRequest;

describe('answerConditionally (RFC 9110 §13)', () => {
  it('sends the body as JSON with ETag, Last-Modified (seconds) and Cache-Control', async () => {
    const { reply, headers, status } = fakeReply();
    const sent = await answerConditionally(request({}), reply, representation);
    expect(JSON.parse(sent!.toString('utf8'))).toEqual({ ok: true });
    expect(status()).toBe(200);
    expect(headers).toEqual({
      etag: '"abc"',
      'last-modified': 'Sat, 31 Jan 2026 12:00:00 GMT',
      'cache-control': 'private, no-cache',
      'content-type': 'application/json; charset=utf-8',
    });
  });

  it('serializes a body object once, however often it is sent (a kept representation)', async () => {
    const kept = { vessels: [{ name: 'Nordic Aurora' }], note: 'ü' };
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      const first = await answerConditionally(request({}), fakeReply().reply, {
        ...representation,
        body: () => kept,
      });
      const again = await answerConditionally(request({}), fakeReply().reply, {
        ...representation,
        body: () => kept,
      });
      const other = await answerConditionally(request({}), fakeReply().reply, {
        ...representation,
        body: () => ({ ...kept }),
      });
      expect(again).toBe(first);
      expect(other).not.toBe(first);
      expect(other!.equals(first!)).toBe(true);
      expect(first!.toString('utf8')).toBe(JSON.stringify(kept));
      expect(stringify.mock.calls.filter(([v]) => v === kept)).toHaveLength(2); // the first answer, and the line above
    } finally {
      stringify.mockRestore();
    }
  });

  it('answers 304 without a body, with the same headers, and never builds the body', async () => {
    const { reply, headers, status } = fakeReply();
    const body = jest.fn(() => ({ ok: true }));
    await expect(
      answerConditionally(request({ 'if-none-match': '"abc"' }), reply, { ...representation, body }),
    ).resolves.toBeUndefined();
    expect(status()).toBe(304);
    expect(headers.etag).toBe('"abc"');
    expect(headers['content-type']).toBeUndefined();
    expect(body).not.toHaveBeenCalled();
  });

  it('lets If-None-Match win over If-Modified-Since', async () => {
    const { reply, status } = fakeReply();
    const body = await answerConditionally(
      request({ 'if-none-match': '"other"', 'if-modified-since': 'Sat, 31 Jan 2026 12:00:00 GMT' }),
      reply,
      representation,
    );
    expect(JSON.parse(body!.toString('utf8'))).toEqual({ ok: true });
    expect(status()).toBe(200);
  });

  it('sets no validator when building the body fails (the answer is then a Problem)', async () => {
    const { reply, headers } = fakeReply();
    const failing = { ...representation, body: () => Promise.reject(new Error('no record')) };
    await expect(answerConditionally(request({}), reply, failing)).rejects.toThrow('no record');
    expect(headers).toEqual({});
  });
});

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
