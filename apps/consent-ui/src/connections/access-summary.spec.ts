import type { MemberAccessResponse } from '@svc/contracts';
import { previousConnections, recentSince, summarize } from './access-summary';

const NOW = Date.parse('2026-03-31T12:00:00.000Z');

function history(partial: Partial<MemberAccessResponse>): MemberAccessResponse {
  return { consents: [], reads: [], partners: [], ...partial };
}

describe('recentSince', () => {
  it('is the first of the 30 UTC days ending today', () => {
    expect(recentSince(NOW)).toBe('2026-03-02');
  });
});

describe('summarize', () => {
  it("sums one partner's reads of the window per scope, and its latest read over the whole history", () => {
    const access = history({
      reads: [
        {
          client_id: 'p1',
          scope: 'profile:read',
          day: '2026-03-01',
          count: 9,
          last_at: '2026-03-01T10:00:00.000Z',
        },
        {
          client_id: 'p1',
          scope: 'profile:read',
          day: '2026-03-02',
          count: 2,
          last_at: '2026-03-02T10:00:00.000Z',
        },
        {
          client_id: 'p1',
          scope: 'seatime:read',
          day: '2026-03-31',
          count: 1,
          last_at: '2026-03-31T11:00:00.000Z',
        },
        {
          client_id: 'p2',
          scope: 'vessels:read',
          day: '2026-03-31',
          count: 50,
          last_at: '2026-03-31T11:59:00.000Z',
        },
      ],
    });
    const summary = summarize(access, 'p1', ['profile:read', 'seatime:read', 'vessels:read'], NOW);
    expect(summary.lastAccessAt).toBe('2026-03-31T11:00:00.000Z');
    expect(summary.recent.map((r) => r.count)).toEqual([2, 1, 0]);
  });

  it('has no last access for a partner that never read', () => {
    expect(summarize(history({}), 'p1', ['profile:read'], NOW)).toEqual({
      recent: [expect.objectContaining({ count: 0 })],
    });
  });
});

describe('previousConnections', () => {
  it('lists disconnected partners with history or a disconnect within 13 months, latest disconnect first', () => {
    const access = history({
      partners: [
        { client_id: 'now', client_name: 'Still Connected' },
        { client_id: 'recent', client_name: 'Recently Gone' },
        { client_id: 'old', client_name: 'Long Gone' },
        { client_id: 'reader', client_name: 'Reads Kept' },
      ],
      consents: [
        {
          client_id: 'now',
          client_name: 'Still Connected',
          scopes: [],
          granted_at: '2026-01-01T00:00:00.000Z',
        },
        {
          client_id: 'recent',
          client_name: 'Recently Gone',
          scopes: [],
          granted_at: '2025-01-01T00:00:00.000Z',
          revoked_at: '2026-03-01T00:00:00.000Z',
        },
        {
          client_id: 'old',
          client_name: 'Long Gone',
          scopes: [],
          granted_at: '2024-01-01T00:00:00.000Z',
          revoked_at: '2025-01-01T00:00:00.000Z',
        },
      ],
      reads: [
        {
          client_id: 'now',
          scope: 'profile:read',
          day: '2026-03-30',
          count: 1,
          last_at: '2026-03-30T00:00:00.000Z',
        },
        {
          client_id: 'reader',
          scope: 'profile:read',
          day: '2026-03-30',
          count: 4,
          last_at: '2026-03-30T00:00:00.000Z',
        },
      ],
    });
    const previous = previousConnections(access, new Set(['now']), NOW);
    expect(previous.map((p) => p.clientName)).toEqual(['Recently Gone', 'Reads Kept']);
    expect(previous[0].disconnectedAt).toBe('2026-03-01T00:00:00.000Z');
    expect(previous[1].access.recent).toEqual([expect.objectContaining({ count: 4 })]);
  });
});
