import type { Writable } from 'node:stream';

interface MuxLike {
  out?: unknown;
  _readIncoming?: unknown;
}

/**
 * Makes one amqplib connection write the frames it has ready in one socket write.
 *
 * amqplib queues each channel's frames and, once per turn of the event loop, its multiplexer
 * writes them to the socket one `write` each: one system call per publish or ack. The outbox
 * relay publishes a hundred events at a time, and those single writes were a third of its CPU.
 * Corking the socket around the multiplexer's pass sends everything that pass writes as one
 * `writev`; the frames, their order and the back-pressure (a full socket buffer still stops the
 * pass until 'drain') are unchanged.
 *
 * This reaches into amqplib's connection (`connection.muxer`, amqplib 0.10). When the shape is not
 * the expected one (another amqplib version), it changes nothing and says so: frames are then
 * written one by one, correct but slower.
 */
export function coalesceFrameWrites(model: unknown): boolean {
  const mux = (model as { connection?: { muxer?: MuxLike } } | undefined)?.connection?.muxer;
  const out = mux?.out as Partial<Writable> | undefined;
  const readIncoming = mux?._readIncoming;
  if (
    !mux ||
    typeof readIncoming !== 'function' ||
    typeof out?.cork !== 'function' ||
    typeof out.uncork !== 'function'
  ) {
    return false;
  }
  const pass = readIncoming as (this: MuxLike) => void;
  const socket = out as Writable;
  mux._readIncoming = function corkedPass(this: MuxLike) {
    socket.cork();
    try {
      pass.call(this);
    } finally {
      socket.uncork();
    }
  };
  return true;
}
