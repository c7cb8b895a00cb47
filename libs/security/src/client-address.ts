/**
 * The client's address as the gateway saw it: the last `X-Forwarded-For` entry, the one nginx
 * appended (`$proxy_add_x_forwarded_for` of its `$remote_addr`, which is the real client behind
 * the load balancers listed in GATEWAY_TRUSTED_PROXIES). Entries before it are whatever the
 * client sent, so a client cannot choose its own address by sending the header. Without the
 * header (no gateway in front), the socket's peer. The apps are reachable only through the
 * gateway; Fastify's `request.ip` is not used, because with `trustProxy` it is the first entry.
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
