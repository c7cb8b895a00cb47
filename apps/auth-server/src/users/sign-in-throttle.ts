import { Inject, Injectable } from '@nestjs/common';
import { normaliseEmail } from '@svc/contracts';
import {
  addressLimitKey,
  APP_CONFIG,
  CLIENT_IPV6_PREFIX,
  APP_LOGGER,
  DependencyUnavailableError,
  REDIS,
  type ConfigOf,
  type RedisClient,
} from '@svc/platform';
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { AUTH_SERVER_CONFIG } from '../config';

/**
 * Failed sign-ins an account may have from one address (stops one guesser quickly) and from
 * everywhere (bounds guessing spread over many addresses, at the price of holding the account's
 * sign-in shut for a window) before attempts are refused unchecked.
 */
export const SIGN_IN_LIMITS = {
  perAddress: { failures: 5, windowMs: 15 * 60_000 },
  perAccount: { failures: 50, windowMs: 60 * 60_000 },
  // Any account (SIGN_IN_FAILURES_PER_ADDRESS of them): stops one address guessing over many
  // accounts (or unknown e-mails) before scrypt runs, so a flood costs a Redis call per attempt.
  perAddressAnyAccount: { windowMs: 15 * 60_000 },
} as const;

/**
 * Reserves an attempt on every counter in KEYS in one atomic step, so parallel guesses cannot all
 * pass the check before the first failure is recorded. A counter starts its window at its first
 * attempt. A refused attempt is not counted (the window still ends on time).
 * ARGV: each key's limit and window (ms). Returns { 1 } or { 0, ms until the exhausted window(s)
 * reopen }. The keys of one call must share a Redis Cluster slot (one hash tag).
 */
const RESERVE_LUA = `
local counts = {}
for i = 1, #KEYS do
  counts[i] = redis.call('INCR', KEYS[i])
  if counts[i] == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[i * 2]) end
end
local waitMs = 0
for i = 1, #KEYS do
  if counts[i] > tonumber(ARGV[i * 2 - 1]) then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 1 then
      redis.call('PEXPIRE', KEYS[i], ARGV[i * 2])
      ttl = tonumber(ARGV[i * 2])
    end
    waitMs = math.max(waitMs, ttl)
  end
end
if waitMs == 0 then return { 1 } end
for i = 1, #KEYS do redis.call('DECR', KEYS[i]) end
return { 0, waitMs }
`;

/**
 * A success clears the per-address counter (whoever knows the password is no guesser there) and
 * gives only its own attempt back to the per-account one, which a distributed guess shares. An
 * expired counter is left alone (DECR would create it without a window).
 */
const SUCCEEDED_LUA = `
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[2]) == 1 and tonumber(redis.call('GET', KEYS[2])) > 0 then
  redis.call('DECR', KEYS[2])
end
return 1
`;

const RELEASE_ADDRESS_LUA = `
if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then
  redis.call('DECR', KEYS[1])
end
return 1
`;

export type SignInAttempt =
  | { readonly admitted: true; succeeded(): Promise<void> }
  | { readonly admitted: false; readonly retryAfterSeconds: number };

/**
 * Sign-in throttling for crew members, in Redis so every replica counts together. Keys hold a
 * digest of the normalised e-mail; an unknown e-mail counts like a known one, so refusals say
 * nothing about which accounts exist.
 *
 * Redis unavailable: fail closed (503 "try again"). Admitting unthrottled would hand a guesser
 * unlimited attempts for as long as Redis can be kept away.
 */
@Injectable()
export class SignInThrottle {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG)
    private readonly config: Pick<ConfigOf<typeof AUTH_SERVER_CONFIG>, 'SIGN_IN_FAILURES_PER_ADDRESS'> &
      Partial<Pick<ConfigOf<typeof AUTH_SERVER_CONFIG>, 'CLIENT_IPV6_PREFIX'>>,
  ) {}

  async attempt(email: string, clientIp: string | undefined): Promise<SignInAttempt> {
    const account = createHash('sha256').update(normaliseEmail(email)).digest('base64url');
    // An IPv6 client counts by its network (CLIENT_IPV6_PREFIX, /64 by default): one network holds
    // more addresses than any guesser needs.
    const address = addressLimitKey(
      clientIp ?? 'unknown',
      this.config.CLIENT_IPV6_PREFIX ?? CLIENT_IPV6_PREFIX.parse(undefined, 'production'),
    );
    // Both counters of one account live in the slot of `{<account digest>}`.
    const keys = [`signin:{${account}}:${address}`, `signin:{${account}}`];
    const addressKey = `signin-address:{${address}}`;
    const { perAddress, perAccount, perAddressAnyAccount } = SIGN_IN_LIMITS;
    // Best effort: a reservation not given back only counts as one failure until its window ends.
    const releaseAddress = () => this.redis.eval(RELEASE_ADDRESS_LUA, 1, addressKey).catch(() => undefined);
    let reply: unknown;
    try {
      // The bucket across accounts cannot share the account keys' hash tag, so it is reserved in a
      // call of its own, first; an attempt the account's counters then refuse gives it back.
      const byAddress = (await this.redis.eval(
        RESERVE_LUA,
        1,
        addressKey,
        this.config.SIGN_IN_FAILURES_PER_ADDRESS,
        perAddressAnyAccount.windowMs,
      )) as [number, number?];
      if (byAddress[0] !== 1) return refused(byAddress[1]);
      reply = await this.redis.eval(
        RESERVE_LUA,
        2,
        ...keys,
        perAddress.failures,
        perAddress.windowMs,
        perAccount.failures,
        perAccount.windowMs,
      );
    } catch (err) {
      this.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'sign-in throttle unavailable; attempt refused (try again)',
      );
      // Redis could not count the attempt: the sign-in is refused with "try again" (503 in consent-ui).
      throw new DependencyUnavailableError('redis (sign-in throttle)', err);
    }
    const [admitted, waitMs] = reply as [number, number?];
    if (admitted !== 1) {
      await releaseAddress();
      return refused(waitMs);
    }
    return {
      admitted: true,
      // The address bucket only loses this attempt: one known password does not reset a flood.
      succeeded: async () => {
        await Promise.all([
          this.redis.eval(SUCCEEDED_LUA, 2, ...keys).catch(() => undefined),
          releaseAddress(),
        ]);
      },
    };
  }
}

function refused(waitMs: number | undefined): SignInAttempt {
  return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil((waitMs ?? 1000) / 1000)) };
}
