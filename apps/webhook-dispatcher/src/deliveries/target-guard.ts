import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/**
 * A `lookup` for `net.connect` that answers only with the addresses the guard approved, whatever
 * the name: the socket connects where the check looked, while the request keeps the partner's
 * hostname for the Host header and TLS (SNI and certificate check).
 */
export function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const answers: LookupAddress[] = addresses.map((address) => ({
    address,
    family: isIP(address) === 6 ? 6 : 4,
  }));
  return (_hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = family === 0 ? answers : answers.filter((a) => a.family === family);
    if (usable.length === 0) {
      const err: NodeJS.ErrnoException = new Error('no approved address of the requested family');
      err.code = 'ENOTFOUND';
      callback(err, '', 4);
      return;
    }
    if (options.all) callback(null, usable);
    else callback(null, usable[0].address, usable[0].family);
  };
}
