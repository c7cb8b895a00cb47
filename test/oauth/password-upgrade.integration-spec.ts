import { randomBytes, scryptSync } from 'node:crypto';
import { UsersRepository } from '../../apps/auth-server/src/users/users.repository';
import { UsersService } from '../../apps/auth-server/src/users/users.service';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { startConsentUi, type ConsentUiHarness } from '../support/starters/consent-ui';

/**
 * Password hashes stored under older scrypt parameters (the service hashed at N=2^15 before the
 * cost became configurable) keep working, and are replaced at the member's next successful
 * sign-in through /login, with the current parameters (the harness's PASSWORD_HASH_COST: 2^14
 * here, so the upgrade target is 2^14 > the 2^11 stored below), never at a failed one.
 */
jest.setTimeout(60_000);

const PASSWORD = 'correct horse battery staple';
let auth: AuthServerHarness;
let ui: ConsentUiHarness;

beforeAll(async () => {
  auth = await startAuthServer();
  ui = await startConsentUi(auth);
}, 60_000);

afterAll(async () => {
  await ui?.close();
  await auth?.close();
});

/** The stored form of before, `scrypt$N$r$p$salt$key`, at a given N. */
function oldHash(password: string, N: number): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, 32, { N, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${N}$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

async function memberWithHash(passwordHash: string): Promise<{ userId: string; email: string }> {
  const tag = randomBytes(5).toString('hex');
  const member = { userId: `usr_up_${tag}`, email: `upgrade-${tag}@sandbox.test` };
  await auth.app.get(UsersRepository).upsert({ ...member, name: 'Upgrade Test', passwordHash });
  return member;
}

async function storedHash(userId: string): Promise<string> {
  await auth.app.get(UsersService).onApplicationShutdown();
  return (await auth.app.get(UsersRepository).findById(userId))!.passwordHash;
}

async function signIn(email: string, password: string): Promise<number> {
  const browser = ui.client();
  browser.headers['x-forwarded-for'] = `198.18.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const page = await (await browser.fetch('/login')).text();
  return (await browser.submit(page, 'Sign in', { Email: email, Password: password })).status;
}

describe('password hash upgrade', () => {
  it('signs a member in with a hash of the old format (N=2^15) and replaces it with the current parameters', async () => {
    const stored = oldHash(PASSWORD, 2 ** 15);
    const member = await memberWithHash(stored);
    expect(await signIn(member.email, PASSWORD)).toBe(303);
    // 2^15 is stronger than the harness's 2^14: kept, never downgraded.
    expect(await storedHash(member.userId)).toBe(stored);
  });

  it('upgrades a weaker hash at a successful sign-in only, and the new hash signs in', async () => {
    const stored = oldHash(PASSWORD, 2 ** 11);
    const member = await memberWithHash(stored);

    expect(await signIn(member.email, 'wrong password')).toBe(401);
    expect(await storedHash(member.userId)).toBe(stored);

    expect(await signIn(member.email, PASSWORD)).toBe(303);
    const upgraded = await storedHash(member.userId);
    expect(upgraded).not.toBe(stored);
    expect(upgraded).toMatch(/^scrypt\$16384\$8\$1\$[\w-]{22}\$[\w-]{43}$/);

    expect(await signIn(member.email, PASSWORD)).toBe(303);
    expect(await storedHash(member.userId)).toBe(upgraded);
  });
});
