import { ValidationProblem } from '@svc/platform';
import { parseProfilePatch } from './profile-patch.dto';

const fieldsOf = (body: unknown) => {
  try {
    parseProfilePatch(body);
    return [];
  } catch (err) {
    return err instanceof ValidationProblem ? (err.extras.errors ?? []).map((e) => e.field) : ['thrown'];
  }
};

describe('parseProfilePatch', () => {
  it('takes any of the four fields', () => {
    expect(parseProfilePatch({ role: ' Master ' })).toEqual({ role: 'Master' });
    expect(parseProfilePatch({ photo_url: null })).toEqual({ photoUrl: null });
    expect(parseProfilePatch({ name: 'A', country: 'NO', photo_url: 'https://x.example/p.jpg' })).toEqual({
      name: 'A',
      country: 'NO',
      photoUrl: 'https://x.example/p.jpg',
    });
  });

  it('needs at least one field', () => {
    expect(fieldsOf({})).toEqual(['body']);
  });

  it('names each bad field', () => {
    expect(
      fieldsOf({ name: '', role: 'x'.repeat(101), photo_url: 'javascript:alert(1)', email: 'a@b' }),
    ).toEqual(['email', 'name', 'role', 'photo_url']);
  });
});
