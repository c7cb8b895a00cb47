import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  scrypt,
  timingSafeEqual,
} from 'node:crypto';
import { HashSlots } from './hash-slots';

/** PKCE S256 (RFC 7636 §4.6): BASE64URL(SHA256(ASCII(code_verifier))). */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * scrypt with N = 2^cost, r = 8, p = 1 (OWASP's minimum for scrypt is N=2^17, r=8, p=1): 128 MiB
 * and most of a second of CPU per hash at the default cost, which is what makes an offline guess
 * expensive. The cost is PASSWORD_HASH_COST (log2 N); production refuses less than the default.
 * The stored form carries its own parameters (`scrypt$N$r$p$salt$key`), so a hash made under an
 * older cost still verifies, and is replaced at the member's next successful sign-in.
 */
export const DEFAULT_PASSWORD_HASH_COST = 17;
/** 2^18 is 256 MiB a hash: beyond that one sign-in could take a replica's memory. */
export const MAX_PASSWORD_HASH_COST = 18;
const SCRYPT_R = 8;
const SCRYPT_P = 1;
const KEY_LENGTH = 32;

export interface ScryptParams {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

export function scryptParams(cost: number): ScryptParams {
  if (!Number.isInteger(cost) || cost < 1 || cost > MAX_PASSWORD_HASH_COST) {
    throw new Error(`password hash cost must be an integer from 1 to ${MAX_PASSWORD_HASH_COST}`);
  }
  return { N: 2 ** cost, r: SCRYPT_R, p: SCRYPT_P };
}

/**
 * scrypt needs 128 * N * r bytes; Node refuses anything over `maxmem` (32 MiB by default, too
 * little from 2^15 on). Twice the need leaves room for OpenSSL's own bookkeeping.
 */
function maxmemFor(params: ScryptParams): number {
  return 2 * 128 * params.N * params.r * params.p;
}

/**
 * Hashes at once, and the queue: at most `running` hashes run, because each holds 128 MiB and a
 * thread of libuv's pool, which the PostgreSQL driver also needs (SCRAM key derivation). The
 * queue is sized so that its last place still finishes inside the RPC timeout consent-ui waits:
 * at the default cost a hash takes most of a second, so there is one waiting place per running
 * hash; each step down in cost halves a hash's time and doubles the places (at most 16). One
 * client address runs one hash at a time and holds at most a quarter of the waiting places, so a
 * flood from one address leaves the other slot, and places in the queue, to everyone else.
 */
export const HASHES_RUNNING = 2;

export function hashingSlots(cost: number): HashSlots {
  const waiting = Math.min(16, HASHES_RUNNING * 2 ** Math.max(0, DEFAULT_PASSWORD_HASH_COST - cost));
  return new HashSlots(HASHES_RUNNING, waiting, Math.max(1, waiting >> 2), 1);
}

/**
 * Password hashing at one cost, with its own hashing slots (one instance per app: UsersService).
 * The dummy hash that an unknown e-mail is checked against uses the same parameters as a real
 * member's, so the time an answer takes says nothing about whether the e-mail exists.
 */
export class PasswordHasher {
  readonly params: ScryptParams;
  readonly dummyHash: string;
  private readonly slots: HashSlots;

  constructor(readonly cost: number = DEFAULT_PASSWORD_HASH_COST) {
    this.params = scryptParams(cost);
    this.slots = hashingSlots(cost);
    // A hash of no password anybody has: a zero salt and a key no derivation yields.
    this.dummyHash = formatHash(this.params, Buffer.alloc(16), Buffer.alloc(KEY_LENGTH));
  }

  async hash(password: string, fairnessKey?: string): Promise<string> {
    const salt = randomBytes(16);
    const key = await this.derive(password, salt, this.params, fairnessKey);
    return formatHash(this.params, salt, key);
  }

  /** `fairnessKey` (the client address of a sign-in) shares the hashing slots fairly, see HashSlots. */
  async verify(password: string, stored: string, fairnessKey?: string): Promise<boolean> {
    const parsed = parseHash(stored);
    if (!parsed) return false;
    const derived = await this.derive(password, parsed.salt, parsed.params, fairnessKey);
    return derived.length === parsed.key.length && timingSafeEqual(derived, parsed.key);
  }

  /** The stored hash is weaker than this hasher's parameters (never a downgrade: stronger stays). */
  needsRehash(stored: string): boolean {
    const parsed = parseHash(stored);
    if (!parsed) return true;
    const { N, r, p } = parsed.params;
    return N < this.params.N || r < this.params.r || p < this.params.p;
  }

  private derive(
    password: string,
    salt: Buffer,
    params: ScryptParams,
    fairnessKey: string | undefined,
  ): Promise<Buffer> {
    return this.slots.run(
      () =>
        new Promise((resolve, reject) =>
          scrypt(password, salt, KEY_LENGTH, { ...params, maxmem: maxmemFor(params) }, (err, key) =>
            err ? reject(err) : resolve(key),
          ),
        ),
      fairnessKey,
    );
  }
}

function formatHash(params: ScryptParams, salt: Buffer, key: Buffer): string {
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/**
 * A stored hash, or undefined when it is not one this code wrote: parameters outside what a
 * replica can afford (a damaged row must not make one sign-in take gigabytes) count as not a hash.
 */
function parseHash(stored: string): { params: ScryptParams; salt: Buffer; key: Buffer } | undefined {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return undefined;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  const powerOfTwo = Number.isInteger(params.N) && params.N > 1 && (params.N & (params.N - 1)) === 0;
  if (!powerOfTwo || params.N > 2 ** MAX_PASSWORD_HASH_COST) return undefined;
  if (!Number.isInteger(params.r) || params.r < 1 || params.r > 16) return undefined;
  if (!Number.isInteger(params.p) || params.p < 1 || params.p > 4) return undefined;
  return { params, salt: Buffer.from(salt, 'base64url'), key: Buffer.from(key, 'base64url') };
}

/**
 * Webhook signing secrets must be usable for HMAC, so they cannot be hashed: they are sealed with
 * AES-256-GCM under SECRETS_ENCRYPTION_KEY and opened only to sign.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(base64Key: string) {
    this.key = Buffer.from(base64Key, 'base64');
    if (this.key.length !== 32) throw new Error('SECRETS_ENCRYPTION_KEY must be base64 of exactly 32 bytes');
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [
      'v1',
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      body.toString('base64url'),
    ].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }
}
