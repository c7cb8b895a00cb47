import { DAY_MS, isScope, SCOPE_DESCRIPTIONS, SCOPES, type MemberAccessResponse } from '@svc/contracts';

/** The window the connections page shows reads for, in UTC days, today included. */
export const RECENT_DAYS = 30;

/** What the page says of one partner's reads of the member's record. */
export interface AccessSummary {
  /** ISO 8601 UTC of the partner's latest read; absent when it never read (in 13 months). */
  readonly lastAccessAt?: string;
  /** Reads of the last RECENT_DAYS days per scope, in plain words: every granted scope, any other read. */
  readonly recent: readonly { readonly scope: string; readonly count: number }[];
}

export interface PreviousConnection {
  readonly clientId: string;
  readonly clientName: string;
  /** ISO 8601 UTC: when the member last disconnected it, if that is still on record. */
  readonly disconnectedAt?: string;
  readonly access: AccessSummary;
}

/** The first UTC day (YYYY-MM-DD) of the recent window ending today. */
export function recentSince(now: number): string {
  return new Date(now - (now % DAY_MS) - (RECENT_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
}

/** One partner's history, from the member's whole history (never another partner's rows). */
export function summarize(
  access: MemberAccessResponse,
  clientId: string,
  grantedScopes: readonly string[],
  now = Date.now(),
): AccessSummary {
  const since = recentSince(now);
  let lastAccessAt: string | undefined;
  const recent = new Map<string, number>(grantedScopes.filter(isScope).map((s) => [s, 0]));
  for (const r of access.reads) {
    if (r.client_id !== clientId) continue;
    if (lastAccessAt === undefined || Date.parse(r.last_at) > Date.parse(lastAccessAt))
      lastAccessAt = r.last_at;
    if (r.day >= since) recent.set(r.scope, (recent.get(r.scope) ?? 0) + r.count);
  }
  return {
    ...(lastAccessAt === undefined ? {} : { lastAccessAt }),
    recent: SCOPES.filter((s) => recent.has(s)).map((s) => ({
      scope: SCOPE_DESCRIPTIONS[s],
      count: recent.get(s)!,
    })),
  };
}

/**
 * Partners the member is no longer connected to whose history is still kept: those with reads in
 * the retained 13 months, or a consent ended in that time. Latest disconnect first.
 */
export function previousConnections(
  access: MemberAccessResponse,
  connectedClientIds: ReadonlySet<string>,
  now = Date.now(),
): PreviousConnection[] {
  const retainedSince = new Date(now);
  retainedSince.setUTCMonth(retainedSince.getUTCMonth() - 13);
  const names = new Map(access.partners.map((p) => [p.client_id, p.client_name]));
  const disconnected = new Map<string, string>();
  for (const c of access.consents) {
    if (connectedClientIds.has(c.client_id) || c.revoked_at === undefined) continue;
    const previous = disconnected.get(c.client_id);
    if (previous === undefined || Date.parse(c.revoked_at) > Date.parse(previous))
      disconnected.set(c.client_id, c.revoked_at);
  }
  const ids = new Set<string>();
  for (const r of access.reads) if (!connectedClientIds.has(r.client_id)) ids.add(r.client_id);
  for (const [id, at] of disconnected) if (Date.parse(at) >= retainedSince.getTime()) ids.add(id);
  return [...ids]
    .map((id) => {
      const at = disconnected.get(id);
      return {
        clientId: id,
        clientName: names.get(id) ?? id,
        ...(at === undefined ? {} : { disconnectedAt: at }),
        access: summarize(access, id, [], now),
      };
    })
    .sort(
      (a, b) =>
        (b.disconnectedAt ?? '').localeCompare(a.disconnectedAt ?? '') ||
        a.clientName.localeCompare(b.clientName),
    );
}
