import { GroupBatcher } from './group-batcher';

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('GroupBatcher', () => {
  it('writes a lone call at once, and the calls that queue up meanwhile together', async () => {
    const writes: number[][] = [];
    const pending: ReturnType<typeof deferred<number[]>>[] = [];
    const batcher = new GroupBatcher<number, number>(
      (items) => {
        writes.push([...items]);
        const d = deferred<number[]>();
        pending.push(d);
        return d.promise;
      },
      100,
      1,
    );
    const first = batcher.submit(1);
    expect(writes).toEqual([[1]]);
    const rest = [2, 3, 4].map((n) => batcher.submit(n));
    expect(writes).toHaveLength(1);
    pending[0].resolve([10]);
    await expect(first).resolves.toBe(10);
    expect(writes).toEqual([[1], [2, 3, 4]]);
    pending[1].resolve([20, 30, 40]);
    await expect(Promise.all(rest)).resolves.toEqual([20, 30, 40]);
  });

  it("sends the next batch before the finished batch's callers go on, on success and on failure", async () => {
    const events: string[] = [];
    const pending: ReturnType<typeof deferred<number[]>>[] = [];
    const batcher = new GroupBatcher<number, number>(
      (items) => {
        events.push(`write ${items.join(',')}`);
        const d = deferred<number[]>();
        pending.push(d);
        return d.promise;
      },
      100,
      1,
    );
    const first = batcher.submit(1).then((n) => events.push(`caller of 1 got ${n}`));
    const second = batcher.submit(2).catch(() => events.push('caller of 2 failed'));
    pending[0].resolve([10]);
    await first;
    const third = batcher.submit(3).then((n) => events.push(`caller of 3 got ${n}`));
    pending[1].reject(new Error('database down'));
    await second;
    pending[2].resolve([30]);
    await third;
    expect(events).toEqual([
      'write 1',
      'write 2',
      'caller of 1 got 10',
      'write 3',
      'caller of 2 failed',
      'caller of 3 got 30',
    ]);
  });

  it('keeps batches within their bound and at most maxInFlight writes at a time', async () => {
    const writes: number[][] = [];
    let open = 0;
    let maxOpen = 0;
    const batcher = new GroupBatcher<number, number>(
      async (items) => {
        writes.push([...items]);
        open += 1;
        maxOpen = Math.max(maxOpen, open);
        await new Promise((r) => setTimeout(r, 5));
        open -= 1;
        return items.map((n) => n * 2);
      },
      3,
      2,
    );
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => batcher.submit(i)));
    expect(results).toEqual(Array.from({ length: 10 }, (_, i) => i * 2));
    expect(Math.max(...writes.map((w) => w.length))).toBeLessThanOrEqual(3);
    expect(maxOpen).toBe(2);
    expect(writes.flat().sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('fails every call of a failed batch, and goes on with the next', async () => {
    let calls = 0;
    const batcher = new GroupBatcher<number, number>(
      async (items) => {
        calls += 1;
        if (calls === 1) throw new Error('database unavailable');
        return items.map((n) => n);
      },
      10,
      1,
    );
    const failed = [batcher.submit(1), batcher.submit(2)];
    await expect(failed[0]).rejects.toThrow('database unavailable');
    await expect(failed[1]).resolves.toBe(2);
    await expect(batcher.submit(3)).resolves.toBe(3);
  });

  describe('gathering the turn', () => {
    it('sends every call of one turn in one write, and a later call in a new one', async () => {
      const writes: string[][] = [];
      const batcher = new GroupBatcher<string, string>(
        (items) => {
          writes.push([...items]);
          return Promise.resolve(items.map((k) => k.toUpperCase()));
        },
        100,
        4,
        true,
      );
      const answers = await Promise.all(['a', 'b', 'a', 'c'].map((k) => batcher.submit(k)));
      expect(answers).toEqual(['A', 'B', 'A', 'C']);
      expect(writes).toEqual([['a', 'b', 'a', 'c']]);
      await expect(batcher.submit('d')).resolves.toBe('D');
      expect(writes).toEqual([['a', 'b', 'a', 'c'], ['d']]);
    });

    it('splits a turn at maxBatch and rejects every call of a failed write', async () => {
      const writes: number[][] = [];
      const batcher = new GroupBatcher<number, number>(
        (items) => {
          writes.push([...items]);
          return items.includes(4) ? Promise.reject(new Error('database away')) : Promise.resolve([...items]);
        },
        3,
        4,
        true,
      );
      const outcomes = await Promise.allSettled([1, 2, 3, 4, 5].map((n) => batcher.submit(n)));
      expect(writes).toEqual([
        [1, 2, 3],
        [4, 5],
      ]);
      expect(outcomes.map((o) => o.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'rejected',
        'rejected',
      ]);
    });
  });
});
