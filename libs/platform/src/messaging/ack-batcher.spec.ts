import { AckBatcher, type AckChannel } from './ack-batcher';

interface Msg {
  readonly tag: number;
}

function fakeChannel() {
  const frames: string[] = [];
  let closed = false;
  const channel: AckChannel<Msg> = {
    ack(m, allUpTo) {
      if (closed) throw new Error('Channel closed');
      frames.push(`ack ${m.tag}${allUpTo ? ' and all before' : ''}`);
    },
    nack(m, _allUpTo, requeue) {
      if (closed) throw new Error('Channel closed');
      frames.push(`nack ${m.tag}${requeue ? ' requeue' : ''}`);
    },
  };
  return { channel, frames, close: () => (closed = true) };
}

const tick = () => new Promise((r) => setImmediate(r));
const messages = (n: number) => Array.from({ length: n }, (_, i) => ({ tag: i + 1 }));

describe('AckBatcher', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 1000;
  });

  it('settles a run of finished messages with one frame', async () => {
    const { channel, frames } = fakeChannel();
    const acks = new AckBatcher(channel, 50, now);
    const m = messages(5);
    m.forEach((x) => acks.received(x));
    for (const x of [m[2], m[0], m[4], m[1], m[3]]) acks.ack(x);
    await tick();
    expect(frames).toEqual(['ack 5 and all before']);
    expect(acks.unsettled).toBe(0);
  });

  it('acks up to the first message still running, and the rest once they have lingered', async () => {
    const { channel, frames } = fakeChannel();
    const acks = new AckBatcher(channel, 50, now);
    const m = messages(4);
    m.forEach((x) => acks.received(x));
    acks.ack(m[0]);
    acks.ack(m[2]);
    acks.ack(m[3]);
    await tick();
    // m[1] is still running: m[2] and m[3] wait behind it, not beyond lingerMs.
    expect(frames).toEqual(['ack 1 and all before']);
    clock += 50;
    await new Promise((r) => setTimeout(r, 80));
    expect(frames).toEqual(['ack 1 and all before', 'ack 3', 'ack 4']);
    // When the slow one finishes, it is settled alone: the others are no longer outstanding.
    acks.ack(m[1]);
    await tick();
    expect(frames).toEqual(['ack 1 and all before', 'ack 3', 'ack 4', 'ack 2 and all before']);
    expect(acks.unsettled).toBe(0);
  });

  it('nacks at once and never covers a nacked message with a later ack', async () => {
    const { channel, frames } = fakeChannel();
    const acks = new AckBatcher(channel, 50, now);
    const m = messages(3);
    m.forEach((x) => acks.received(x));
    acks.nack(m[1], true);
    expect(frames).toEqual(['nack 2 requeue']);
    acks.ack(m[0]);
    acks.ack(m[2]);
    await tick();
    // Tag 2 is no longer outstanding with the broker, so "3 and all before" settles 1 and 3 only.
    expect(frames).toEqual(['nack 2 requeue', 'ack 3 and all before']);
  });

  it('flush sends every finished ack at once (before a shutdown closes the channel)', () => {
    const { channel, frames } = fakeChannel();
    const acks = new AckBatcher(channel, 50, now);
    const m = messages(3);
    m.forEach((x) => acks.received(x));
    acks.ack(m[1]);
    acks.ack(m[2]);
    acks.flush();
    expect(frames).toEqual(['ack 2', 'ack 3']);
    expect(acks.unsettled).toBe(1);
  });

  it('forgets everything when the channel is gone (the broker redelivers), without throwing', async () => {
    const { channel, frames, close } = fakeChannel();
    const acks = new AckBatcher(channel, 50, now);
    const m = messages(2);
    m.forEach((x) => acks.received(x));
    close();
    acks.ack(m[0]);
    expect(() => acks.nack(m[1], false)).not.toThrow();
    await tick();
    expect(frames).toEqual([]);
    expect(acks.unsettled).toBe(0);
  });

  it('ignores a second settlement of the same message', async () => {
    const { channel, frames } = fakeChannel();
    const acks = new AckBatcher(channel, 50, now);
    const [m] = messages(1);
    acks.received(m);
    acks.ack(m);
    acks.nack(m, true);
    await tick();
    acks.ack(m);
    await tick();
    expect(frames).toEqual(['ack 1 and all before']);
  });
});
