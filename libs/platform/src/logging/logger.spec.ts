import { Writable } from 'node:stream';
import { QueryFailedError } from 'typeorm';
import { createLogger, isoTimeOncePerMs } from './logger';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: createLogger('test', 'info', sink), lines };
}

describe('createLogger redaction', () => {
  it("keeps a failed query's SQL but not its bound values", () => {
    const { logger, lines } = capture();
    const err = new QueryFailedError(
      'SELECT 1 WHERE email = ANY($1)',
      [['crew.member@example.com']],
      new Error('boom'),
    );
    logger.error({ err }, 'query failed');
    expect(lines.join('')).toContain('SELECT 1 WHERE email = ANY($1)');
    expect(lines.join('')).not.toContain('crew.member@example.com');
  });

  it('hides credentials in any object', () => {
    const { logger, lines } = capture();
    logger.info({ body: { client_secret: 'cs_live_value', password: 'hunter2' } }, 'form');
    expect(lines.join('')).not.toMatch(/cs_live_value|hunter2/);
  });
});

describe('isoTimeOncePerMs', () => {
  afterEach(() => jest.useRealTimers());

  it("writes pino's ISO time field, made again only when the millisecond changes", () => {
    jest.useFakeTimers({ now: new Date('2026-11-26T17:50:01.123Z') });
    const time = isoTimeOncePerMs();
    const toISOString = jest.spyOn(Date.prototype, 'toISOString');
    try {
      expect(time()).toBe(',"time":"2026-11-26T17:50:01.123Z"');
      expect(time()).toBe(',"time":"2026-11-26T17:50:01.123Z"');
      expect(toISOString).toHaveBeenCalledTimes(1);
      jest.advanceTimersByTime(1);
      expect(time()).toBe(',"time":"2026-11-26T17:50:01.124Z"');
      expect(toISOString).toHaveBeenCalledTimes(2);
    } finally {
      toISOString.mockRestore();
    }
  });

  it('stamps every line of a logger with the time it was written', () => {
    const { logger, lines } = capture();
    const before = Date.now();
    logger.info('one');
    const stamped = Date.parse((JSON.parse(lines[0]) as { time: string }).time);
    expect(stamped).toBeGreaterThanOrEqual(before);
    expect(stamped).toBeLessThanOrEqual(Date.now());
  });
});
