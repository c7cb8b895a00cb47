import type { AccessReadCount } from '@svc/contracts';
import pino from 'pino';
import { AccessReadsRecorder, ReadTally } from './access-reads';

const T0 = Date.parse('2026-03-05T23:59:59.500Z');

describe('ReadTally', () => {
  it('counts per member, partner, scope and UTC day, with the time of the latest read', () => {
    const tally = new ReadTally();
    tally.count('usr_a', 'p1', 'profile:read', T0);
    tally.count('usr_a', 'p1', 'profile:read', T0 + 100);
    tally.count('usr_a', 'p2', 'profile:read', T0);
    tally.count('usr_a', 'p1', 'vessels:read', T0);
    tally.count('usr_b', 'p1', 'profile:read', T0);
    tally.count('usr_a', 'p1', 'profile:read', T0 + 1000); // 00:00:00.500 the next day
    const taken = tally.take();
    expect(taken).toHaveLength(5);
    expect(taken).toContainEqual({
      user_id: 'usr_a',
      client_id: 'p1',
      scope: 'profile:read',
      day: '2026-03-05',
      count: 2,
      last_at: '2026-03-05T23:59:59.600Z',
    });
    expect(taken).toContainEqual({
      user_id: 'usr_a',
      client_id: 'p1',
      scope: 'profile:read',
      day: '2026-03-06',
      count: 1,
      last_at: '2026-03-06T00:00:00.500Z',
    });
    expect(taken.filter((c) => c.client_id === 'p2')).toEqual([
      expect.objectContaining({ user_id: 'usr_a', count: 1, day: '2026-03-05' }),
    ]);
    expect(tally.take()).toEqual([]);
  });

  it('puts back what was not written, merged with what came since', () => {
    const tally = new ReadTally();
    tally.count('usr_a', 'p1', 'profile:read', T0);
    const unwritten = tally.take();
    tally.count('usr_a', 'p1', 'profile:read', T0 - 5000);
    tally.restore(unwritten);
    expect(tally.take()).toEqual([
      expect.objectContaining({ count: 2, last_at: '2026-03-05T23:59:59.500Z' }),
    ]);
  });
});

class FakeRecorder extends AccessReadsRecorder {
  readonly written: AccessReadCount[][] = [];
  failing = false;

  constructor() {
    super(pino({ level: 'silent' }), 60_000);
  }

  protected write(counts: readonly AccessReadCount[]): Promise<void> {
    if (this.failing) return Promise.reject(new Error('auth-server did not answer'));
    this.written.push([...counts]);
    return Promise.resolve();
  }
}

const principal = (user: string, client = 'p1') => ({
  user_id: user,
  client_id: client,
  scopes: ['profile:read'],
  exp: 0,
});

describe('AccessReadsRecorder', () => {
  it('writes batches of at most a thousand counts', async () => {
    const recorder = new FakeRecorder();
    for (let i = 0; i < 2500; i++) recorder.count(principal(`usr_${i}`) as never, 'profile:read');
    await recorder.flush();
    expect(recorder.written.map((b) => b.length)).toEqual([1000, 1000, 500]);
    await recorder.flush();
    expect(recorder.written).toHaveLength(3);
  });

  it('keeps counts it could not write for the next flush', async () => {
    const recorder = new FakeRecorder();
    recorder.count(principal('usr_a') as never, 'profile:read');
    recorder.failing = true;
    await recorder.flush();
    expect(recorder.written).toEqual([]);
    recorder.count(principal('usr_a') as never, 'profile:read');
    recorder.failing = false;
    await recorder.flush();
    expect(recorder.written).toEqual([[expect.objectContaining({ user_id: 'usr_a', count: 2 })]]);
  });

  it('writes what it holds when the app shuts down gracefully', async () => {
    const recorder = new FakeRecorder();
    recorder.onApplicationBootstrap();
    recorder.count(principal('usr_a') as never, 'seatime:read');
    await recorder.onModuleDestroy();
    expect(recorder.written).toEqual([[expect.objectContaining({ scope: 'seatime:read', count: 1 })]]);
  });
});
