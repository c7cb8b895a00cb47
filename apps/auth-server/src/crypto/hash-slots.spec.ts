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
});
