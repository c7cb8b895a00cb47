import { Writable } from 'node:stream';
import { QueryFailedError } from 'typeorm';
import { createLogger } from './logger';

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
