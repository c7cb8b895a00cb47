import { PartnerSlots } from './partner-slots';

describe('PartnerSlots: at most N attempts of one partner at once', () => {
  it('gives a partner N slots, and another partner its own N meanwhile', async () => {
    const slots = new PartnerSlots(2);
    const a1 = await slots.take('a', 'retry');
    const a2 = await slots.take('a', 'retry');
    expect(await slots.take('a', 'retry', 0)).toBeUndefined();
    const b1 = await slots.take('b', 'retry', 0);
    expect(b1).toBeDefined();
    expect([slots.inUse('a'), slots.inUse('b')]).toEqual([2, 1]);
    a1?.();
    a2?.();
    b1?.();
    expect([slots.inUse('a'), slots.inUse('b')]).toEqual([0, 0]);
  });

  it('gives up waiting after maxWaitMs, and the slot then goes to nobody who left', async () => {
    const slots = new PartnerSlots(1);
    const held = await slots.take('a', 'retry');
    const started = Date.now();
    expect(await slots.take('a', 'backlog', 30)).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    held?.();
    expect(slots.inUse('a')).toBe(0);
  });

  it('serves waiting retries before the waiting backlog, each in its order; a release counts once', async () => {
    const slots = new PartnerSlots(1);
    const held = await slots.take('a', 'retry');
    const order: string[] = [];
    const wait = (name: string, priority: 'retry' | 'backlog') =>
      slots.take('a', priority).then((release) => {
        order.push(name);
        release?.();
      });
    const all = Promise.all([
      wait('backlog 1', 'backlog'),
      wait('retry 1', 'retry'),
      wait('backlog 2', 'backlog'),
      wait('retry 2', 'retry'),
    ]);
    held?.();
    held?.();
    await all;
    expect(order).toEqual(['retry 1', 'retry 2', 'backlog 1', 'backlog 2']);
    expect(slots.inUse('a')).toBe(0);
  });
});
