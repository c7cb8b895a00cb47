/** The OAuth scopes partners can be granted (docs/rules.md, Authentication). */
export const SCOPES = ['profile:read', 'seatime:read', 'vessels:read'] as const;
export type Scope = (typeof SCOPES)[number];
/** A space-separated list of scopes, as `scope` carries it. */
export const SCOPE_LIST_PATTERN = `^(${SCOPES.join('|')})( (${SCOPES.join('|')}))*$`;

/** What the consent screen and the connections page say each scope lets a partner see. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  'profile:read': 'Your name, crew role, country, photo and membership',
  'seatime:read': 'Your sea-time totals and your 12-month sea-time trend',
  'vessels:read': 'Your vessel history: ships, roles and dates of service',
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
