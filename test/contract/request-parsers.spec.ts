import fc from 'fast-check';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { JsonObject } from '@svc/contracts';
import { parseVesselsQuery } from '../../apps/crew-api/src/vessels/dto/vessels-query.dto';
import { parseMemberLeft } from '../../apps/sponsorship-api/src/members-left/dto/member-left.dto';
import { parseReconcile } from '../../apps/sponsorship-api/src/seats/dto/reconcile.dto';
import {
  parseProvision,
  parseSeatListQuery,
} from '../../apps/sponsorship-api/src/seats/dto/seat-requests.dto';
import {
  parseDeliveryListQuery,
  parseReplay,
} from '../../apps/webhook-dispatcher/src/partner-webhooks/dto/delivery-requests.dto';
import { DOCUMENT, resolve } from '../support/contract';
import { operations, validValue, wrongValue } from '../fuzz/schema-arbitrary';

/**
 * Request drift, both ways: for values drawn from the API description (valid ones and wrong
 * ones), each public operation's parser accepts exactly what the description accepts. Most of
 * these parsers are derived from the declarations in libs/contracts/src/requests.ts; reconcile's
 * is written by hand, and this is what keeps it true to the description.
 */
const ajv = new Ajv2020({ strict: false, validateFormats: true });
addFormats(ajv);
ajv.addSchema({ ...DOCUMENT, $id: 'doc' } as object);
const compile = (schema: JsonObject) =>
  ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"doc#/components/')) as object);

const NOW = new Date('2026-03-01T00:00:00Z');
const PARSERS: Record<string, (input: unknown) => unknown> = {
  'GET /v1/me/vessels': parseVesselsQuery,
  'GET /v1/partners/sponsorships': parseSeatListQuery,
  'POST /v1/partners/sponsorships': (body) => parseProvision(body, NOW),
  'POST /v1/partners/sponsorships/reconcile': parseReconcile,
  'POST /v1/partners/members/left': parseMemberLeft,
  'GET /v1/partners/webhooks/deliveries': parseDeliveryListQuery,
  'POST /v1/partners/webhooks/replay': parseReplay,
};

/**
 * What the parsers refuse although JSON Schema cannot say it: text is trimmed before its length
 * is checked; a provisioned term ends ahead of now and within the longest term; the seat list's
 * own cursors are never longer than 400 characters; reconcile caps `max_cancel` at 10^9.
 */
function refusedBeyondSchema(field: string, value: unknown): boolean {
  if (typeof value === 'string' && (value.trim().length === 0 || value.trim() !== value)) return true;
  if (field === 'expires_at' && typeof value === 'string') {
    const at = Date.parse(value);
    return at <= NOW.getTime() || at > Date.UTC(2036, 2, 1);
  }
  if (field === 'cursor' && typeof value === 'string') return value.length > 400;
  if (field === 'max_cancel') return typeof value === 'number' && value > 1e9;
  if (field === 'active_refs' && Array.isArray(value)) return value.some((v) => refusedBeyondSchema('', v));
  return false;
}

/** Rules between fields of one body: a replay's `until` is after its `since`, at most 7 days later. */
function bodyRuleBroken(key: string, body: Record<string, unknown>): boolean {
  if (key !== 'POST /v1/partners/webhooks/replay') return false;
  const since = typeof body.since === 'string' ? Date.parse(body.since) : NaN;
  const until = typeof body.until === 'string' ? Date.parse(body.until) : NaN;
  if (Number.isNaN(since) || Number.isNaN(until)) return false;
  return until <= since || until - since > 7 * 86_400_000;
}

function accepts(parse: (input: unknown) => unknown, input: unknown): boolean {
  try {
    parse(input);
    return true;
  } catch (error) {
    if (error instanceof Error && /Problem|Exception/.test(error.constructor.name)) return false;
    throw error;
  }
}

/** A query value as it arrives: text (a number drawn for an integer is sent as its digits). */
const asQuery = (value: unknown) =>
  typeof value === 'number' || typeof value === 'boolean' ? String(value) : value;
/** What JSON Schema is asked about a query value: for an integer, digits are the number they spell. */
const fromQuery = (value: unknown, schema: JsonObject) =>
  schema.type === 'integer' && typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value;
const allowedBeyondSchema = (body: Record<string, unknown>) =>
  !Object.entries(body).some(([k, v]) => refusedBeyondSchema(k, v));

/** The edges of a schema's ranges, which random draws seldom reach. */
function edges(schema: JsonObject): unknown[] {
  const s = resolve(schema);
  const out: unknown[] = [];
  if (typeof s.maxLength === 'number') out.push('y'.repeat(s.maxLength), 'y'.repeat(s.maxLength + 1));
  if (typeof s.minimum === 'number') out.push(s.minimum, s.minimum - 1);
  if (typeof s.maximum === 'number') out.push(s.maximum, s.maximum + 1);
  if (typeof s.maxItems === 'number' && s.items) {
    const [item] = edges(s.items as JsonObject);
    out.push(Array.from({ length: s.maxItems }, () => item ?? 'y'));
    out.push(
      Array.from({ length: s.maxItems + 1 }, () => 'y'),
      [],
      ...edges(s.items as JsonObject).map((e) => [e]),
    );
  }
  return out;
}

const cases = operations()
  .filter((op) => PARSERS[op.key])
  .flatMap((op) => {
    const query = op.parameters.filter((p) => p.in === 'query');
    const fields: [string, JsonObject, boolean][] = op.body
      ? Object.entries((resolve(op.body.schema).properties ?? {}) as Record<string, JsonObject>).map(
          ([name, schema]) => [name, schema, false],
        )
      : query.map((p) => [p.name, p.schema, true]);
    return fields.map(([field, schema, inQuery]) => ({ key: op.key, field, schema, inQuery, op }));
  });

describe('request parsers against the API description', () => {
  it('covers every public operation with a parser', () => {
    expect(new Set(cases.map((c) => c.key))).toEqual(new Set(Object.keys(PARSERS)));
  });

  it.each(cases)('$key: $field is accepted exactly when the description accepts it', (c) => {
    const validate = compile(c.schema);
    const body = c.op.body ? resolve(c.op.body.schema) : undefined;
    const base = body
      ? (fc.sample(
          validValue(body).filter(
            (b) =>
              allowedBeyondSchema(b as Record<string, unknown>) &&
              !bodyRuleBroken(c.key, b as Record<string, unknown>),
          ),
          {
            seed: 3,
            numRuns: 1,
          },
        )[0] as Record<string, unknown>)
      : {};
    const drawn = fc.sample(fc.oneof(validValue(c.schema), wrongValue(c.schema)), {
      seed: 11,
      numRuns: 150,
    });
    const seen = { accepted: 0, refused: 0 };
    for (const raw of [...edges(c.schema), ...drawn]) {
      const value = c.inQuery ? asQuery(raw) : raw;
      if (refusedBeyondSchema(c.field, value)) continue;
      const input = { ...base, [c.field]: value };
      if (bodyRuleBroken(c.key, input)) continue;
      const expected = Boolean(validate(c.inQuery ? fromQuery(value, c.schema) : value));
      expect({ value, accepted: accepts(PARSERS[c.key], input) }).toEqual({ value, accepted: expected });
      seen[expected ? 'accepted' : 'refused'] += 1;
    }
    expect(seen.accepted).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });
});
