import { Writable } from 'node:stream';
import { coalesceFrameWrites } from './frame-coalescing';

/** A socket stand-in that records each write it is asked to do, as the kernel would see them. */
function recordingSocket() {
  const syscalls: string[][] = [];
  const socket = new Writable({
    write(chunk: Buffer, _enc, done) {
      syscalls.push([chunk.toString()]);
      done();
    },
    writev(chunks, done) {
      syscalls.push(chunks.map((c) => (c.chunk as Buffer).toString()));
      done();
    },
  });
  return { socket, syscalls };
}

function fakeModel(socket: Writable, frames: string[]) {
  const muxer = {
    out: socket,
    passes: 0,
    _readIncoming(this: { out: Writable; passes: number }) {
      this.passes += 1;
      for (const f of frames) this.out.write(Buffer.from(f));
    },
  };
  return { connection: { muxer } };
}

describe('coalesceFrameWrites', () => {
  it('sends the frames of one multiplexer pass in one write, in order', async () => {
    const { socket, syscalls } = recordingSocket();
    const model = fakeModel(socket, ['publish 1', 'publish 2', 'ack 7']);
    expect(coalesceFrameWrites(model)).toBe(true);

    model.connection.muxer._readIncoming();
    await new Promise((r) => setImmediate(r));

    expect(model.connection.muxer.passes).toBe(1);
    expect(syscalls).toEqual([['publish 1', 'publish 2', 'ack 7']]);
  });

  it('without it, each frame is a write of its own (what it saves)', async () => {
    const { socket, syscalls } = recordingSocket();
    const model = fakeModel(socket, ['publish 1', 'publish 2']);
    model.connection.muxer._readIncoming();
    await new Promise((r) => setImmediate(r));
    expect(syscalls.length).toBeGreaterThanOrEqual(1);
    expect(syscalls[0]).toEqual(['publish 1']);
  });

  it('leaves a connection of another shape alone', () => {
    expect(coalesceFrameWrites({})).toBe(false);
    expect(coalesceFrameWrites({ connection: { muxer: { out: {}, _readIncoming: () => undefined } } })).toBe(
      false,
    );
    expect(coalesceFrameWrites(undefined)).toBe(false);
  });
});
