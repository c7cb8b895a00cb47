import { FakeClock, FakeSessionsRepository } from '../../../../test/support/fake-consent-ui';
import { parseCookies } from './cookies';
import { digestSessionId } from './secrets';
import { HOST_SESSION_COOKIE, LOGIN_CSRF_COOKIE, SESSION_COOKIE } from './session-cookies';
import { SessionException } from './sessions.exception';
import { SessionsService } from './sessions.service';

function setup(secure = true, { hostPrefix = false, idleMs = 30 * 60_000 } = {}) {
  const repository = new FakeSessionsRepository();
  const clock = new FakeClock();
  const service = new SessionsService(repository.asRepository(), { secure, hostPrefix }, clock.read, idleMs);
  return { repository, clock, service };
}

/** The Cookie header a browser would send back after these Set-Cookie values. */
function cookieHeaderFrom(setCookies: readonly string[]): string {
  return setCookies
    .map((c) => c.split(';')[0])
    .filter((pair) => !pair.endsWith('='))
    .join('; ');
}

describe('SessionsService', () => {
  it('starts a session: an HttpOnly, SameSite=Lax, Secure cookie; only the digest is stored', async () => {
    const { repository, service } = setup();
    const { session, cookies } = await service.start('usr_1', undefined);
    const sessionCookie = cookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(sessionCookie).toMatch(/; Path=\/; Max-Age=43200; HttpOnly; Secure; SameSite=Lax$/);
    const id = parseCookies(cookieHeaderFrom(cookies)).get(SESSION_COOKIE)!;
    const [row] = [...repository.rows.values()];
    expect(row.idDigest).toBe(digestSessionId(id));
    expect(JSON.stringify(row)).not.toContain(id);
    expect(row.userId).toBe('usr_1');
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(12 * 3600 * 1000);
    expect(session.userId).toBe('usr_1');
    // The sign-in form's CSRF cookie has done its job.
    expect(cookies).toContainEqual(
      expect.stringMatching(new RegExp(`^${LOGIN_CSRF_COOKIE}=; Path=/login; Max-Age=0`)),
    );
  });

  it('leaves Secure off when the policy says so (local sandbox over http)', async () => {
    const { service } = setup(false);
    const { cookies } = await service.start('usr_1', undefined);
    expect(cookies.every((c) => !c.includes('Secure'))).toBe(true);
    expect(cookies.every((c) => c.includes('HttpOnly') && c.includes('SameSite=Lax'))).toBe(true);
  });

  it('resolves the session of the cookie until it expires after 12 hours', async () => {
    const { clock, service } = setup(true, { idleMs: 24 * 3600 * 1000 });
    const { session, cookies } = await service.start('usr_1', undefined);
    const header = cookieHeaderFrom(cookies);
    await expect(service.resolve(header)).resolves.toEqual(session);
    clock.advance(12 * 3600 * 1000 - 1);
    await expect(service.resolve(header)).resolves.toEqual(session);
    clock.advance(1);
    await expect(service.resolve(header)).resolves.toBeUndefined();
  });

  it('signs out a session unused for longer than the idle timeout, even before the 12 hours', async () => {
    const { repository, clock, service } = setup();
    const { session, cookies } = await service.start('usr_1', undefined);
    const header = cookieHeaderFrom(cookies);
    clock.advance(30 * 60_000);
    await expect(service.resolve(header)).resolves.toEqual(session);
    clock.advance(30 * 60_000 + 1);
    await expect(service.resolve(header)).resolves.toBeUndefined();
    expect(repository.rows.size).toBe(0);
  });

  it('keeps a session in use alive, writing last-seen at most once a minute', async () => {
    const { repository, clock, service } = setup();
    const { session, cookies } = await service.start('usr_1', undefined);
    const header = cookieHeaderFrom(cookies);
    const touch = jest.spyOn(repository, 'touch');
    clock.advance(59_999);
    await service.resolve(header);
    expect(touch).not.toHaveBeenCalled();
    clock.advance(1);
    await service.resolve(header);
    expect(touch).toHaveBeenCalledTimes(1);
    await service.resolve(header);
    expect(touch).toHaveBeenCalledTimes(1);
    // Used every 20 minutes for 3 hours: never idle for 30.
    for (let i = 0; i < 9; i++) {
      clock.advance(20 * 60_000);
      await expect(service.resolve(header)).resolves.toEqual(session);
    }
  });

  it('names the cookie __Host-svc_session in production (Secure, Path=/, no Domain) and reads only that name', async () => {
    const { service } = setup(true, { hostPrefix: true });
    const { session, cookies } = await service.start('usr_1', undefined);
    const cookie = cookies.find((c) => c.startsWith(`${HOST_SESSION_COOKIE}=`))!;
    expect(HOST_SESSION_COOKIE).toBe('__Host-svc_session');
    expect(cookie).toMatch(/; Path=\/; Max-Age=43200; HttpOnly; Secure; SameSite=Lax$/);
    expect(cookie).not.toMatch(/domain=/i);
    const id = parseCookies(cookieHeaderFrom(cookies)).get(HOST_SESSION_COOKIE)!;
    await expect(service.resolve(`${HOST_SESSION_COOKIE}=${id}`)).resolves.toEqual(session);
    // The sandbox's name is not read in production (a plain-HTTP page could have set it).
    await expect(service.resolve(`${SESSION_COOKIE}=${id}`)).resolves.toBeUndefined();
    expect(await service.end(`${HOST_SESSION_COOKIE}=${id}`)).toEqual([
      expect.stringMatching(/^__Host-svc_session=; Path=\/; Max-Age=0.*; Secure; SameSite=Lax$/),
    ]);
  });

  it('keeps the name svc_session in the sandbox and does not read the __Host- one there', async () => {
    const { service } = setup(false);
    const { cookies } = await service.start('usr_1', undefined);
    expect(cookies[0]).toMatch(/^svc_session=/);
    const id = parseCookies(cookieHeaderFrom(cookies)).get(SESSION_COOKIE)!;
    await expect(service.resolve(`${HOST_SESSION_COOKIE}=${id}`)).resolves.toBeUndefined();
  });

  it('refuses a __Host- cookie without Secure', () => {
    expect(() => setup(false, { hostPrefix: true })).toThrow('Secure');
  });

  it('resolves nothing for a missing, malformed or unknown cookie', async () => {
    const { service } = setup();
    await expect(service.resolve(undefined)).resolves.toBeUndefined();
    await expect(service.resolve(`${SESSION_COOKIE}=not-a-token`)).resolves.toBeUndefined();
    await expect(service.resolve(`${SESSION_COOKIE}=${'A'.repeat(43)}`)).resolves.toBeUndefined();
  });

  it('replaces the previous session on sign-in (no session fixation)', async () => {
    const { repository, service } = setup();
    const first = await service.start('usr_1', undefined);
    const firstHeader = cookieHeaderFrom(first.cookies);
    const second = await service.start('usr_2', firstHeader);
    await expect(service.resolve(firstHeader)).resolves.toBeUndefined();
    await expect(service.resolve(cookieHeaderFrom(second.cookies))).resolves.toMatchObject({
      userId: 'usr_2',
    });
    expect(repository.rows.size).toBe(1);
  });

  it('purges expired sessions when someone signs in', async () => {
    const { repository, clock, service } = setup();
    await service.start('usr_old', undefined);
    clock.advance(13 * 3600 * 1000);
    await service.start('usr_new', undefined);
    expect([...repository.rows.values()].map((r) => r.userId)).toEqual(['usr_new']);
  });

  it('ends the session and clears the cookie', async () => {
    const { repository, service } = setup();
    const { cookies } = await service.start('usr_1', undefined);
    const header = cookieHeaderFrom(cookies);
    const cleared = await service.end(header);
    expect(cleared).toEqual([expect.stringMatching(new RegExp(`^${SESSION_COOKIE}=; Path=/; Max-Age=0`))]);
    expect(repository.rows.size).toBe(0);
    await expect(service.resolve(header)).resolves.toBeUndefined();
  });

  describe('CSRF of signed-in forms (RFC 6749 §10.12)', () => {
    it('accepts the session’s own token', async () => {
      const { service } = setup();
      const { session, cookies } = await service.start('usr_1', undefined);
      await expect(service.requireForPost(cookieHeaderFrom(cookies), session.csrfToken)).resolves.toEqual(
        session,
      );
    });

    it('refuses a missing, wrong or other session’s token', async () => {
      const { service } = setup();
      const mine = await service.start('usr_1', undefined);
      const theirs = await service.start('usr_2', undefined);
      const header = cookieHeaderFrom(mine.cookies);
      for (const token of [undefined, '', 'guess', theirs.session.csrfToken, [mine.session.csrfToken]]) {
        await expect(service.requireForPost(header, token)).rejects.toEqual(
          new SessionException('csrf_mismatch'),
        );
      }
    });

    it('refuses a post without a live session', async () => {
      const { service } = setup();
      await expect(service.requireForPost(undefined, 'x')).rejects.toMatchObject({
        code: 'session_required',
      });
    });
  });

  describe('CSRF of the sign-in form (double submit)', () => {
    it('sets a random HttpOnly cookie scoped to /login and accepts only its echo', () => {
      const { service } = setup();
      const { token, cookies } = service.loginCsrf(undefined);
      expect(cookies[0]).toMatch(
        new RegExp(
          `^${LOGIN_CSRF_COOKIE}=${token}; Path=/login; Max-Age=\\d+; HttpOnly; Secure; SameSite=Lax$`,
        ),
      );
      const header = cookieHeaderFrom(cookies);
      expect(service.loginCsrfMatches(header, token)).toBe(true);
      expect(service.loginCsrfMatches(header, service.loginCsrf(undefined).token)).toBe(false);
      expect(service.loginCsrfMatches(header, undefined)).toBe(false);
      expect(service.loginCsrfMatches(undefined, token)).toBe(false);
    });

    it('keeps an existing token so two open sign-in tabs both work', () => {
      const { service } = setup();
      const first = service.loginCsrf(undefined);
      expect(service.loginCsrf(cookieHeaderFrom(first.cookies)).token).toBe(first.token);
    });
  });
});
