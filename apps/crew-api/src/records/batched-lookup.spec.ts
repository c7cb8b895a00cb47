import { BatchedLookup } from './batched-lookup';

interface Row {
  readonly key: string;
  readonly n: number;
}

function recordingQuery(rows: (keys: readonly string[]) => Row[]) {
  const calls: string[][] = [];
  const query = (keys: readonly string[]) => {
    calls.push([...keys]);
    return Promise.resolve(rows(keys));
  };
  return { calls, query };
}

describe('BatchedLookup', () => {
  it('answers the lookups of one turn with one query, each caller with its own rows', async () => {
    const { calls, query } = recordingQuery((keys) =>
      keys.flatMap((k) =>
        k === 'none'
          ? []
          : [
              { key: k, n: 1 },
              { key: k, n: 2 },
            ],
      ),
    );
    const lookup = new BatchedLookup<Row>(query, (r) => r.key);

    const [a, b, again, none] = await Promise.all([
      lookup.load('a'),
      lookup.load('b'),
      lookup.load('a'),
      lookup.load('none'),
    ]);

    expect(calls).toEqual([['a', 'b', 'none']]);
    expect(a).toEqual([
      { key: 'a', n: 1 },
      { key: 'a', n: 2 },
    ]);
    expect(b.map((r) => r.key)).toEqual(['b', 'b']);
    expect(again).toEqual(a);
    expect(again).not.toBe(a);
    expect(none).toEqual([]);
  });

  it('starts a new query for lookups made after a batch went out', async () => {
    const { calls, query } = recordingQuery((keys) => keys.map((k) => ({ key: k, n: 0 })));
    const lookup = new BatchedLookup<Row>(query, (r) => r.key);

    await lookup.load('a');
    await lookup.load('b');

    expect(calls).toEqual([['a'], ['b']]);
  });

  it('never puts more than maxKeys keys in one query', async () => {
    const { calls, query } = recordingQuery((keys) => keys.map((k) => ({ key: k, n: 0 })));
    const lookup = new BatchedLookup<Row>(query, (r) => r.key, 3);

    const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const answers = await Promise.all(keys.map((k) => lookup.load(k)));

    expect(calls).toEqual([['a', 'b', 'c'], ['d', 'e', 'f'], ['g']]);
    expect(answers.map((rows) => rows[0]?.key)).toEqual(keys);
  });

  it('rejects every caller of a failed batch with its error, and the next batch runs afresh', async () => {
    let fail = true;
    const lookup = new BatchedLookup<Row>(
      (keys) =>
        fail
          ? Promise.reject(new Error('database away'))
          : Promise.resolve(keys.map((k) => ({ key: k, n: 0 }))),
      (r) => r.key,
    );

    const outcomes = await Promise.allSettled([lookup.load('a'), lookup.load('b'), lookup.load('a')]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const o of outcomes) expect((o as PromiseRejectedResult).reason).toEqual(new Error('database away'));

    fail = false;
    await expect(lookup.load('a')).resolves.toEqual([{ key: 'a', n: 0 }]);
  });

  it('refuses a batch size that is not a positive integer', () => {
    expect(
      () =>
        new BatchedLookup<Row>(
          () => Promise.resolve([]),
          (r) => r.key,
          0,
        ),
    ).toThrow(/maxKeys/);
  });
});
