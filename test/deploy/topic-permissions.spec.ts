/**
 * The topic permissions on crew.events (scripts/lib/credentials.cjs, hand-typed since that file is
 * plain CommonJS) against the contracts: every event type has exactly one publisher, and each
 * consumer binds exactly the types it consumes.
 */
import { CREW_EVENTS_EXCHANGE, EVENT_TYPES, MEMBER_REGISTERED } from '@svc/contracts';
import { APPS, publisherOf, topicPermissions } from '../../scripts/lib/credentials.cjs';

const ROUTING_KEYS = [...EVENT_TYPES, MEMBER_REGISTERED];
const crewEvents = (app: string) => (APPS[app].topics ?? []).find((t) => t.exchange === CREW_EVENTS_EXCHANGE);
const permissionOf = (app: string) => topicPermissions(app).find((t) => t.exchange === CREW_EVENTS_EXCHANGE);

describe('topic permissions on crew.events', () => {
  it('name the contracts’ exchange only', () => {
    for (const app of Object.keys(APPS)) {
      expect(topicPermissions(app).map((t) => t.exchange)).toEqual(
        crewEvents(app) ? [CREW_EVENTS_EXCHANGE] : [],
      );
    }
  });

  it('give every routing key of crew.events one publisher: auth-server the revoked consents, crew-api the rest', () => {
    const published = Object.keys(APPS).flatMap((app) => crewEvents(app)?.publishes ?? []);
    expect([...published].sort()).toEqual([...ROUTING_KEYS].sort());
    expect(crewEvents('auth-server')?.publishes).toEqual(['user.consent.revoked']);
    expect([...(crewEvents('crew-api')?.publishes ?? [])].sort()).toEqual(
      ROUTING_KEYS.filter((k) => k !== 'user.consent.revoked').sort(),
    );
    for (const key of ROUTING_KEYS) {
      expect([key, publisherOf(CREW_EVENTS_EXCHANGE, key)]).toEqual([
        key,
        key === 'user.consent.revoked' ? 'auth-server' : 'crew-api',
      ]);
    }
    expect(() => publisherOf(CREW_EVENTS_EXCHANGE, '#')).toThrow();
  });

  it('let the dispatcher bind the webhook event types and sponsorship-api the registrations, nothing else', () => {
    expect(crewEvents('webhook-dispatcher')?.binds).toEqual([...EVENT_TYPES]);
    expect(crewEvents('sponsorship-api')?.binds).toEqual([MEMBER_REGISTERED]);
    expect(crewEvents('auth-server')?.binds).toEqual([]);
    expect(crewEvents('crew-api')?.binds).toEqual([]);
    // The consumers publish nothing on crew.events.
    expect(crewEvents('webhook-dispatcher')?.publishes).toEqual([]);
    expect(crewEvents('sponsorship-api')?.publishes).toEqual([]);
  });

  it.each(Object.keys(APPS).filter((app) => crewEvents(app)))(
    "%s's regexes match its own keys exactly, no wildcard or longer key",
    (app) => {
      const { publishes, binds } = crewEvents(app)!;
      const { write, read } = permissionOf(app)!;
      const probes = [
        ...ROUTING_KEYS,
        '#',
        '*',
        'user.*',
        'user.#',
        'crew.member.registeredX',
        'xuser.consent.revoked',
      ];
      for (const key of probes) {
        expect([key, new RegExp(write).test(key)]).toEqual([key, publishes.includes(key)]);
        expect([key, new RegExp(read).test(key)]).toEqual([key, binds.includes(key)]);
      }
      // An empty list is `^$`, which only the empty key matches: no event has it, and these apps'
      // vhost permissions do not let them write (or read) crew.events at all.
      expect(new RegExp(write).test('')).toBe(publishes.length === 0);
      expect(new RegExp(read).test('')).toBe(binds.length === 0);
    },
  );
});
