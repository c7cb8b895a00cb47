import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  scrypt,
  timingSafeEqual,
} from 'node:crypto';
import { HashSlots } from './hash-slots';

/** Opaque credentials: 32 random bytes, base64url, with a prefix that secret scanners can match. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function newId(prefix: string): string {
  return `${prefix}${randomBytes(16).toString('base64url')}`;
}

/** Codes, tokens and client secrets are stored only as this digest (decisions.md, OAuth). */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Compares two digests (or other same-length secrets) in constant time. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) {
    // Still spend the comparison so the length mismatch is not observable by timing.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/** PKCE S256 (RFC 7636 §4.6): BASE64URL(SHA256(ASCII(code_verifier))). */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

// scrypt with N=2^15, r=8, p=1 (~32 MiB, tens of ms): slow enough to hurt offline guessing.
const SCRYPT = { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KEY_LENGTH = 32;

/**
 * Two hashes at a time leave the thread pool's other threads to the database driver and the file
 * system; 16 waiting is about half a second of work, well inside the RPC timeout. One client
 * address runs one hash at a time and holds at most 4 of the waiting places, so a flood from one
 * address leaves the other slot to everyone else.
 */
const HASHING = new HashSlots(2, 16, 4, 1);

function scryptAsync(
  password: string,
  salt: Buffer,
  params: { N: number; r: number; p: number },
  fairnessKey?: string,
): Promise<Buffer> {
  return HASHING.run(
    () =>
      new Promise((resolve, reject) =>
        scrypt(password, salt, KEY_LENGTH, { ...params, maxmem: SCRYPT.maxmem }, (err, key) =>
          err ? reject(err) : resolve(key),
        ),
      ),
    fairnessKey,
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** `fairnessKey` (the client address of a sign-in) shares the hashing slots fairly, see HashSlots. */
export async function verifyPassword(
  password: string,
  stored: string,
  fairnessKey?: string,
): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const derived = await scryptAsync(
    password,
    Buffer.from(salt, 'base64url'),
    {
      N: Number(n),
      r: Number(r),
      p: Number(p),
    },
    fairnessKey,
  );
  const expected = Buffer.from(key, 'base64url');
  return derived.length === expected.length && timingSafeEqual(derived, expected);
}

/** A hash of a password nobody has, so an unknown e-mail costs as much time as a wrong password. */
export const DUMMY_PASSWORD_HASH =
  'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

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
