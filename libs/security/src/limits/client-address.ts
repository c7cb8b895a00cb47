/**
 * The last `X-Forwarded-For` entry, the one nginx appended: earlier ones are whatever the client
 * sent (and Fastify's `request.ip` is the first). Without the header, the socket's peer.
 */
export function clientAddress(request: {
  readonly headers: { readonly [name: string]: string | string[] | undefined };
  readonly socket?: { readonly remoteAddress?: string };
}): string | undefined {
  const forwarded = request.headers['x-forwarded-for'];
  const header = Array.isArray(forwarded) ? forwarded[forwarded.length - 1] : forwarded;
  const last = header?.split(',').pop()?.trim();
  const address = last || request.socket?.remoteAddress;
  return address ? address.slice(0, 64) : undefined;
}
