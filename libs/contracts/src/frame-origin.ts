import { ContractViolation } from './rpc/rpc';
import type { FieldRead } from './validate';

/** Origins one partner may register to frame its portal (each is a CSP host source in one header). */
export const FRAME_ORIGINS_MAX = 10;

// A DNS name as CSP's host-source grammar takes it (RFC 1035 labels, ASCII only), then an
// optional port: nothing else, so no wildcard, path, quote, semicolon, comma or space can pass.
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const FRAME_ORIGIN = new RegExp(`^https://(${LABEL}(?:\\.${LABEL})*)(?::([1-9][0-9]{0,4}))?$`);

/**
 * Why `value` cannot be a portal framing origin (undefined: it can). It becomes a CSP host source,
 * so exactly `https://host[:port]`, one host, lower-case ASCII (`xn--` for an IDN).
 */
export function frameOriginProblem(value: string): string | undefined {
  const match = value.length <= 300 ? FRAME_ORIGIN.exec(value) : null;
  if (!match) {
    return `framing origin ${JSON.stringify(value.slice(0, 300))} must be https://host or https://host:port (lower-case ASCII, an IDN as xn--; no wildcard, path or anything after the port)`;
  }
  const [, host, port] = match;
  if (host.length > 253) return `framing origin ${value} has a host longer than 253 characters`;
  if (port !== undefined && Number(port) > 65535) return `framing origin ${value} has no such port`;
  return undefined;
}

/** A list of framing origins as the contract carries them: each one checked, at most FRAME_ORIGINS_MAX. */
export const frameOrigins: FieldRead<string[]> = (contract, record, field) => {
  const value = record[field];
  if (!Array.isArray(value) || value.length > FRAME_ORIGINS_MAX) {
    throw new ContractViolation(
      contract,
      `\`${field}\` must be an array of at most ${FRAME_ORIGINS_MAX} origins`,
    );
  }
  for (const origin of value) {
    if (typeof origin !== 'string' || frameOriginProblem(origin) !== undefined) {
      throw new ContractViolation(contract, `\`${field}\` must hold only https://host[:port] origins`);
    }
  }
  return value as string[];
};
