import { DependencyUnavailableError } from '@svc/platform';
import { HashSlots } from './hash-slots';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('HashSlots', () => {
  it('runs at most `running` at once and starts the queued ones in order as slots free', async () => {
    const slots = new HashSlots(2, 10);
    const gates = [deferred(), deferred(), deferred(), deferred()];
    const started: number[] = [];
    const done = gates.map((gate, i) =>
      slots.run(async () => {
        started.push(i);
        await gate.promise;
        return i;
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    gates[1].resolve();
    await done[1];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    gates[0].resolve();
    gates[2].resolve();
    gates[3].resolve();
    await expect(Promise.all(done)).resolves.toEqual([0, 1, 2, 3]);
  });

  it('refuses at once, as unavailable, when the queue is full', async () => {
    const slots = new HashSlots(1, 1);
    const gate = deferred();
    const first = slots.run(() => gate.promise);
    const queued = slots.run(() => Promise.resolve('queued'));
    await expect(slots.run(() => Promise.resolve('third'))).rejects.toBeInstanceOf(
      DependencyUnavailableError,
    );
    gate.resolve();
    await first;
    await expect(queued).resolves.toBe('queued');
  });

  it('frees the slot when the work fails', async () => {
    const slots = new HashSlots(1, 0);
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.run(() => Promise.resolve('after'))).resolves.toBe('after');
  });

  it('gives a freed slot to the key with the fewest hashes running, not to the longest queue', async () => {
    const slots = new HashSlots(2, 16, 4);
    const gates = Array.from({ length: 6 }, () => deferred());
    const started: string[] = [];
    const run = (key: string, i: number) =>
      slots.run(async () => {
        started.push(`${key}${i}`);
        await gates[i].promise;
      }, key);
    const flood = [0, 1, 2, 3].map((i) => run('flood', i));
    await new Promise((r) => setImmediate(r));
    const member = run('member', 4);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['flood0', 'flood1']);
    gates[0].resolve();
    await flood[0];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['flood0', 'flood1', 'member4']);
    gates.forEach((gate) => gate.resolve());
    await Promise.all([...flood, member]);
    expect(started).toEqual(['flood0', 'flood1', 'member4', 'flood2', 'flood3']);
  });

  it('refuses a key at once when it already holds its share of the queue', async () => {
    const slots = new HashSlots(1, 16, 1);
    const gate = deferred();
    const first = slots.run(() => gate.promise, 'flood');
    const queued = slots.run(() => Promise.resolve('queued'), 'flood');
    await expect(slots.run(() => Promise.resolve('third'), 'flood')).rejects.toBeInstanceOf(
      DependencyUnavailableError,
    );
    const other = slots.run(() => Promise.resolve('other'), 'member');
    gate.resolve();
    await first;
    await expect(queued).resolves.toBe('queued');
    await expect(other).resolves.toBe('other');
  });

  it('runs one key at most `runningPerKey` at once, keeping the other slots for other keys', async () => {
    const slots = new HashSlots(2, 16, 4, 1);
    const gates = Array.from({ length: 3 }, () => deferred());
    const started: string[] = [];
    const run = (key: string, i: number) =>
      slots.run(async () => {
        started.push(`${key}${i}`);
        await gates[i].promise;
      }, key);
    const flood = [run('flood', 0), run('flood', 1)];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['flood0']);
    const member = run('member', 2);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['flood0', 'member2']);
    gates[0].resolve();
    await flood[0];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['flood0', 'member2', 'flood1']);
    gates.forEach((gate) => gate.resolve());
    await Promise.all([...flood, member]);
  });
});
