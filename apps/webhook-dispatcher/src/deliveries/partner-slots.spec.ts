import { PartnerSlots } from './partner-slots';

describe('PartnerSlots: at most N attempts of one partner at once', () => {
  it('gives a partner N slots, and another partner its own N meanwhile', async () => {
    const slots = new PartnerSlots(2);
    const a1 = await slots.take('a');
    const a2 = slots.tryTake('a');
    expect(await slots.take('a', 0)).toBeUndefined();
    expect(slots.tryTake('a')).toBeUndefined();
    const b1 = slots.tryTake('b');
    expect(b1).toBeDefined();
    expect([slots.inUse('a'), slots.inUse('b')]).toEqual([2, 1]);
    a1?.();
    a2?.();
    b1?.();
    expect([slots.inUse('a'), slots.inUse('b')]).toEqual([0, 0]);
  });

  it('gives up waiting after maxWaitMs, and the slot then goes to nobody who left', async () => {
    const slots = new PartnerSlots(1);
    const held = await slots.take('a');
    const started = Date.now();
    expect(await slots.take('a', 30)).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(slots.waiting('a')).toBe(0);
    held?.();
    expect(slots.inUse('a')).toBe(0);
  });

  it('serves waiters in their order; a release counts once', async () => {
    const slots = new PartnerSlots(1);
    const held = await slots.take('a');
    const order: string[] = [];
    const wait = (name: string) =>
      slots.take('a').then((release) => {
        order.push(name);
        release?.();
      });
    const all = Promise.all([wait('first'), wait('second'), wait('third')]);
    expect(slots.waiting('a')).toBe(3);
    held?.();
    held?.();
    await all;
    expect(order).toEqual(['first', 'second', 'third']);
    expect(slots.inUse('a')).toBe(0);
  });
});
