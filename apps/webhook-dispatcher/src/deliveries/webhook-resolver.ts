import { readFileSync } from 'node:fs';
import { Resolver as DnsResolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Resolver } from '@svc/platform';

/** How many times c-ares asks each name server before it gives up on a name. */
const DNS_TRIES = 2;

/**
 * The names of a hosts file (`/etc/hosts`), read once: the sandbox's `localhost` and
 * `host.docker.internal` (Docker writes it there) resolve as they did through the system's lookup.
 */
export function hostsFile(text: string): ReadonlyMap<string, readonly string[]> {
  const names = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/);
    if (!address || isIP(address) === 0) continue;
    for (const name of aliases.map((a) => a.toLowerCase())) {
      names.set(name, [...(names.get(name) ?? []), address]);
    }
  }
  return names;
}

function readHosts(path: string): ReadonlyMap<string, readonly string[]> {
  try {
    return hostsFile(readFileSync(path, 'utf8'));
  } catch {
    return new Map();
  }
}

/**
 * Every A and AAAA address of a name, through c-ares (node:dns's Resolver: sockets on the event
 * loop, not libuv's four threads that `dns.lookup` and every file read share), so a partner whose
 * DNS answers slowly holds no thread another partner's lookup needs. c-ares gives up after
 * DNS_TRIES tries of `timeoutMs` per server; the attempt's own deadline (WebhookSender) cuts it
 * sooner. Names of the hosts file come from it first. `servers` (WEBHOOK_DNS_SERVERS) replaces the
 * system's name servers.
 */
export function dnsResolver(
  timeoutMs: number,
  servers: readonly string[] = [],
  hostsPath = '/etc/hosts',
): Resolver {
  const resolver = new DnsResolver({ timeout: timeoutMs, tries: DNS_TRIES });
  if (servers.length > 0) resolver.setServers([...servers]);
  const hosts = readHosts(hostsPath);
  return async (hostname) => {
    const known = hosts.get(hostname.toLowerCase());
    if (known) return known;
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses = [v4, v6].flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
    if (addresses.length > 0) return addresses;
    throw v4.status === 'rejected' ? v4.reason : new Error(`${hostname} has no address`);
  };
}
