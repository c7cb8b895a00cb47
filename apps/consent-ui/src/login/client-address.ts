import type { FastifyRequest } from 'fastify';

/**
 * The browser's address for sign-in throttling: the last `X-Forwarded-For` entry, the one the
 * gateway appended (nginx's `$proxy_add_x_forwarded_for`), since entries before it are whatever
 * the client sent and a guesser could vary them at will; without the header (no gateway), the
 * socket's peer.
 */
export function clientAddress(request: Pick<FastifyRequest, 'headers' | 'socket'>): string | undefined {
  const forwarded = request.headers['x-forwarded-for'];
  const header = Array.isArray(forwarded) ? forwarded[forwarded.length - 1] : forwarded;
  const last = header?.split(',').pop()?.trim();
  const address = last || request.socket?.remoteAddress;
  return address ? address.slice(0, 64) : undefined;
}
