import type { Principal } from '@svc/security';
import { FakeRecordWriter, LOCKED_MEMBER } from '../../../../test/support/fake-record-writer';
import type { MembersRepository, ProfileChanges, ProfileRow } from './members.repository';
import { MembersService } from './members.service';

const row: ProfileRow = {
  userId: 'usr_1',
  email: 'kari@example.test',
  name: 'Kari',
  role: 'Bosun',
  country: 'NO',
  photoUrl: null,
  updatedAt: '2026-01-31T12:00:00.123Z',
  updatedAtExact: '2026-01-31T12:00:00.123456Z',
  tier: 'premium',
  source: 'sponsored',
  since: '2025-06-01T00:00:00.000Z',
  sponsorClientId: 'partner-a',
  expiresAt: '2026-06-01T00:00:00.000Z',
};

const principal = (clientId: string, scopes = ['profile:read']): Principal => ({
  user_id: 'usr_1',
  client_id: clientId,
  scopes,
  expires_at: '2026-02-01T00:00:00Z',
});

function service(found: ProfileRow | null = row) {
  const updates: ProfileChanges[] = [];
  const repository = {
    profile: () => Promise.resolve(found ?? undefined),
    updateProfile: (_tx: unknown, _id: string, changes: ProfileChanges) => {
      updates.push(changes);
      return Promise.resolve();
    },
  } as unknown as MembersRepository;
  const writer = new FakeRecordWriter(LOCKED_MEMBER);
  return { members: new MembersService(repository, writer.asWriter()), writer, updates };
}

describe('MembersService.profile', () => {
  it('shows the term and sponsored_by_you to the sponsor only', async () => {
    const { members } = service();
    const sponsor = await members.profile(principal('partner-a'));
    expect((await sponsor.body()).membership).toEqual({
      tier: 'premium',
      source: 'sponsored',
      since: '2025-06-01T00:00:00.000Z',
      expires_at: '2026-06-01T00:00:00.000Z',
      sponsored_by_you: true,
    });
    const other = await members.profile(principal('partner-b'));
    expect((await other.body()).membership).toEqual({
      tier: 'premium',
      source: 'sponsored',
      since: '2025-06-01T00:00:00.000Z',
    });
  });

  it('gives each caller, scope set and record state its own strong ETag', async () => {
    const { members } = service();
    const a = await members.profile(principal('partner-a'));
    const b = await members.profile(principal('partner-b'));
    const wider = await members.profile(principal('partner-a', ['seatime:read', 'profile:read']));
    const again = await members.profile(principal('partner-a', ['profile:read']));
    expect(new Set([a.etag, b.etag, wider.etag]).size).toBe(3);
    expect(again.etag).toBe(a.etag);
    expect(a.etag).toMatch(/^"[^"]+"$/);
    expect(a.lastModified.toISOString()).toBe('2026-01-31T12:00:00.123Z');
    const changed = await service({ ...row, updatedAtExact: '2026-01-31T12:00:00.123457Z' }).members.profile(
      principal('partner-a'),
    );
    expect(changed.etag).not.toBe(a.etag);
  });

  it('throws member_not_found without a crew record', async () => {
    await expect(service(null).members.profile(principal('partner-a'))).rejects.toMatchObject({
      code: 'member_not_found',
    });
  });
});

describe('MembersService.updateProfile', () => {
  it('writes, stamps and announces a change', async () => {
    const { members, writer, updates } = service();
    const answer = await members.updateProfile('usr_1', { role: 'Master' });
    expect(answer).toMatchObject({ user_id: 'usr_1', role: 'Master', name: 'Kari' });
    expect(answer.record_updated_at).not.toBe(LOCKED_MEMBER.recordUpdatedAt);
    expect(updates).toEqual([{ role: 'Master' }]);
    expect(writer.stamps).toEqual([{ vessels: false }]);
    expect(writer.events).toEqual(['user.profile.updated']);
  });

  it('does nothing for values already there', async () => {
    const { members, writer, updates } = service();
    const answer = await members.updateProfile('usr_1', { role: 'Bosun', photoUrl: null });
    expect(answer.record_updated_at).toBe(LOCKED_MEMBER.recordUpdatedAt);
    expect(updates).toEqual([]);
    expect(writer.stamps).toEqual([]);
    expect(writer.events).toEqual([]);
  });
});
