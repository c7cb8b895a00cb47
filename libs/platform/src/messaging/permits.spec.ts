import { Permits } from './permits';

function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Permits', () => {
  it('runs at most the limit at once, and the waiting ones in arrival order as permits free', async () => {
    const permits = new Permits(2);
    const gates = [deferred(), deferred(), deferred(), deferred()];
    const started: number[] = [];
    const runs = gates.map((gate, i) =>
      permits.run(async () => {
        started.push(i);
        await gate.promise;
        return i;
      }),
    );
    await tick();
    expect(started).toEqual([0, 1]);
    gates[1].resolve();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    gates[0].resolve();
    await tick();
    expect(started).toEqual([0, 1, 2, 3]);
    gates[2].resolve();
    gates[3].resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
  });

  it('frees the permit of a task that fails, and passes its error on', async () => {
    const permits = new Permits(1);
    const failing = permits.run(() => Promise.reject(new Error('partner down')));
    const next = permits.run(async () => 'ran');
    await expect(failing).rejects.toThrow('partner down');
    expect(await next).toBe('ran');
    // Nothing is left holding a permit: a third task starts at once.
    let started = false;
    const third = permits.run(async () => {
      started = true;
    });
    await tick();
    expect(started).toBe(true);
    await third;
  });

  it('refuses a limit below one', () => {
    expect(() => new Permits(0)).toThrow(RangeError);
  });
});
