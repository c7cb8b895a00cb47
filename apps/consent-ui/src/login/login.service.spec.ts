import { API_LIMITS, AUTH_LOGIN } from '@svc/contracts';
import {
  cookieHeader,
  FakeClock,
  FakeRpcClient,
  FakeSessionsRepository,
} from '../../../../test/support/fake-consent-ui';
import { SessionsService } from '../sessions/sessions.service';
import { parseLoginForm } from './login-form.dto';
import { LoginService } from './login.service';

function setup() {
  const rpc = new FakeRpcClient().on(AUTH_LOGIN, ({ email }) => ({ ok: true, user_id: 'usr_1', email }));
  const repository = new FakeSessionsRepository();
  const sessions = new SessionsService(repository.asRepository(), { secure: true }, new FakeClock().read);
  return { rpc, repository, sessions, service: new LoginService(rpc.asRpcClient(), sessions) };
}

describe('LoginService', () => {
  it('never sends over-long input to auth-server; it cannot be a valid credential', async () => {
    const { rpc, service } = setup();
    const { form, cookies } = service.showForm(undefined, '/account/connections');
    const outcome = await service.signIn(
      cookieHeader(cookies),
      parseLoginForm({
        email: `${'a'.repeat(API_LIMITS.emailMaxLength)}@x.test`,
        password: 'p',
        csrf: form.csrfToken,
      }),
    );
    expect(outcome).toMatchObject({ outcome: 'retry', form: { problem: 'invalid_credentials' } });
    expect(rpc.calls).toEqual([]);
  });

  it('treats repeated form fields (arrays) as missing', async () => {
    const { rpc, service } = setup();
    const { form, cookies } = service.showForm(undefined, undefined);
    const outcome = await service.signIn(
      cookieHeader(cookies),
      parseLoginForm({ email: ['a@x.test', 'b@x.test'], password: 'p', csrf: form.csrfToken }),
    );
    expect(outcome).toMatchObject({ outcome: 'retry', form: { problem: 'missing_fields' } });
    expect(rpc.calls).toEqual([]);
  });

  it('keeps return_to through a failed attempt, and the e-mail typed, never the password', async () => {
    const { rpc, service } = setup();
    rpc.on(AUTH_LOGIN, () => ({ ok: false }));
    const { form, cookies } = service.showForm(undefined, '/oauth/authorize?client_id=x');
    const outcome = await service.signIn(
      cookieHeader(cookies),
      parseLoginForm({
        email: 'a@x.test',
        password: 'secret',
        csrf: form.csrfToken,
        return_to: form.returnTo,
      }),
    );
    expect(outcome).toMatchObject({
      outcome: 'retry',
      form: { returnTo: '/oauth/authorize?client_id=x', email: 'a@x.test', problem: 'invalid_credentials' },
    });
    expect(JSON.stringify(outcome)).not.toContain('secret');
  });

  it('signs out without a session as if it had one (nothing to end, no error)', async () => {
    const { service } = setup();
    await expect(service.signOut(undefined, undefined)).resolves.toEqual([
      expect.stringMatching(/^svc_session=; Path=\/; Max-Age=0/),
    ]);
  });
});
