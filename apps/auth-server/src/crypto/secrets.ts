import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  scrypt,
  timingSafeEqual,
  type ScryptOptions,
} from 'node:crypto';
import { promisify } from 'node:util';
import { HashSlots } from './hash-slots';

const scryptAsync = promisify<string, Buffer, number, ScryptOptions, Buffer>(scrypt);

/** PKCE S256 (RFC 7636 §4.6): BASE64URL(SHA256(ASCII(code_verifier))). */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * scrypt with N = 2^cost, r = 8, p = 1 (OWASP's minimum is N=2^17): 128 MiB and most of a second
 * per hash at the default. The stored form carries its parameters (`scrypt$N$r$p$salt$key`), so
 * an older hash still verifies, and is replaced at the member's next successful sign-in.
 */
export const DEFAULT_PASSWORD_HASH_COST = 17;
/** 2^18 is 256 MiB a hash: beyond that one sign-in could take a replica's memory. */
export const MAX_PASSWORD_HASH_COST = 18;
const KEY_LENGTH = 32;

type ScryptParams = { readonly N: number; readonly r: number; readonly p: number };

export function scryptParams(cost: number): ScryptParams {
  if (!Number.isInteger(cost) || cost < 1 || cost > MAX_PASSWORD_HASH_COST) {
    throw new Error(`password hash cost must be an integer from 1 to ${MAX_PASSWORD_HASH_COST}`);
  }
  return { N: 2 ** cost, r: 8, p: 1 };
}

/**
 * Each hash holds 128 MiB and a libuv thread. The queue's last place must still finish inside
 * consent-ui's RPC timeout: one waiting place per running hash at the default cost, doubling with
 * each step down (at most 16). One address runs one hash and holds a quarter of the places.
 */
export const HASHES_RUNNING = 2;

export function hashingSlots(cost: number): HashSlots {
  const waiting = Math.min(16, HASHES_RUNNING * 2 ** Math.max(0, DEFAULT_PASSWORD_HASH_COST - cost));
  return new HashSlots(HASHES_RUNNING, waiting, Math.max(1, waiting >> 2), 1);
}

/**
 * Password hashing at one cost, with its own hashing slots. An unknown e-mail is checked against a
 * dummy hash of the same parameters, so the time taken says nothing about whether it exists.
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
    // scrypt needs 128 * N * r bytes, over Node's default `maxmem`; twice that leaves OpenSSL room.
    const options = { ...params, maxmem: 2 * 128 * params.N * params.r * params.p };
    return this.slots.run(() => scryptAsync(password, salt, KEY_LENGTH, options), fairnessKey);
  }
}

function formatHash(params: ScryptParams, salt: Buffer, key: Buffer): string {
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Parameters a replica cannot afford (a damaged row must not cost gigabytes) are not a hash. */
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

/** Webhook signing secrets are needed for HMAC, so they are sealed (AES-256-GCM), not hashed. */
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
    return ['v1', ...[iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url'))].join('.');
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
