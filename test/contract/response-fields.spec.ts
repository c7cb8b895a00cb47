import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { JsonObject } from '@svc/contracts';
import type { Principal } from '@svc/security';
import { MetadataController } from '../../apps/auth-server/src/metadata/metadata.controller';
import type { UsersRepository } from '../../apps/auth-server/src/users/users.repository';
import { UserinfoService } from '../../apps/auth-server/src/userinfo/userinfo.service';
import { toProfileResponse } from '../../apps/crew-api/src/members/members.service';
import type { ProfileRow } from '../../apps/crew-api/src/members/members.repository';
import { DOCUMENT, resolve } from '../support/contract';

/**
 * Response drift, the other way. Every answer the suites receive is validated against the API
 * description (test/support/contract.ts): its objects are closed, so an answer with a field the
 * description lacks fails, and one without a required field fails too. For a schema whose
 * fields are all required that check holds both ways. What it cannot see is an optional field
 * the description promises and no answer ever carries: this spec finds every optional field of
 * every response schema and asks the app code that builds that answer to show it, in the variant
 * that carries it (the sponsor's view of a membership, a token with `profile:read`).
 */
const ajv = new Ajv2020({ strict: false, validateFormats: true });
addFormats(ajv);
ajv.addSchema({ ...DOCUMENT, $id: 'doc' } as object);
const validator = (component: string) => ajv.getSchema(`doc#/components/schemas/${component}`)!;

const schemas = (DOCUMENT.components as JsonObject).schemas as Record<string, JsonObject>;

/** Every schema reachable from a response of any operation, by component name. */
function responseComponents(): Set<string> {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    const ref = (node as JsonObject).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      const name = ref.slice('#/components/schemas/'.length);
      if (found.has(name)) return;
      found.add(name);
      return visit(schemas[name]);
    }
    Object.values(node).forEach(visit);
  };
  for (const item of Object.values(DOCUMENT.paths as Record<string, JsonObject>))
    for (const operation of Object.values(item)) visit((operation as JsonObject).responses);
  return found;
}

/** `Component.field` for each field of a response schema that an answer may leave out. */
function optionalFields(): string[] {
  const out: string[] = [];
  for (const name of responseComponents()) {
    const schema = resolve(schemas[name]);
    const required = new Set((schema.required ?? []) as string[]);
    for (const field of Object.keys((schema.properties ?? {}) as JsonObject))
      if (!required.has(field)) out.push(`${name}.${field}`);
  }
  return out.sort();
}

const ROW: ProfileRow = {
  userId: 'usr_sandbox_alex_morgan',
  email: 'alex.morgan@sandbox.test',
  name: 'Alex Morgan',
  role: 'Chief Officer',
  country: 'NO',
  photoUrl: null,
  tier: 'premium',
  source: 'sponsored',
  sponsorClientId: 'sandbox-partner',
  updatedAt: '2026-03-03T09:15:00.000Z',
  updatedAtExact: '2026-03-03T09:15:00.000000Z',
  since: '2026-01-01T00:00:00.000Z',
  expiresAt: '2027-01-01T00:00:00.000Z',
};

const principal = (scopes: string[]): Principal => ({
  user_id: ROW.userId,
  client_id: 'sandbox-partner',
  scopes,
  expires_at: '2026-03-03T10:15:00.000Z',
});

const users = {
  findById: () =>
    Promise.resolve({
      userId: ROW.userId,
      email: 'alex.morgan@sandbox.test',
      passwordHash: 'not used',
      name: ROW.name,
      createdAt: new Date('2026-01-01T00:00:00Z'),
      updatedAt: new Date('2026-03-03T09:15:00Z'),
    }),
} as unknown as UsersRepository;

/** The answers as the apps build them, in every variant that changes which fields appear. */
async function answers(): Promise<[component: string, value: object][]> {
  // Counting the read (the access history) does not change the answer.
  const userinfo = new UserinfoService(users, { count: () => undefined } as never);
  const config = { PUBLIC_BASE_URL: 'http://localhost:8080', DOCS_URL: 'http://localhost:8080/docs' };
  const profiles = [toProfileResponse(ROW, 'sandbox-partner'), toProfileResponse(ROW, 'another-partner')];
  return [
    ...profiles.map((p) => ['Profile', p] as [string, object]),
    ...profiles.map((p) => ['Membership', p.membership] as [string, object]),
    ['Userinfo', { ...(await userinfo.describe(principal(['profile:read']))) }],
    ['Userinfo', { ...(await userinfo.describe(principal(['vessels:read']))) }],
    ['AuthorizationServerMetadata', new MetadataController(config as never).get()],
  ];
}

describe('response fields, both ways', () => {
  it('finds the optional fields of the response schemas (this spec is not vacuous)', () => {
    expect(optionalFields()).toEqual(
      expect.arrayContaining([
        'Membership.expires_at',
        'Userinfo.name',
        'AuthorizationServerMetadata.service_documentation',
      ]),
    );
  });

  it('builds answers that match the description', async () => {
    for (const [component, value] of await answers()) {
      const validate = validator(component);
      expect({ component, valid: validate(value), errors: validate.errors ?? null }).toEqual({
        component,
        valid: true,
        errors: null,
      });
    }
  });

  it('carries every optional field the description declares in some answer', async () => {
    const carried = new Set<string>();
    for (const [component, value] of await answers())
      for (const field of Object.keys(value)) carried.add(`${component}.${field}`);
    expect(optionalFields().filter((field) => !carried.has(field))).toEqual([]);
  });

  it('leaves out the sponsor-only and profile-only fields where the description says so', async () => {
    const [sponsor, other, withProfile, withoutProfile] = (await answers()).map(([, v]) => v).slice(2, 6);
    expect(Object.keys(sponsor)).toEqual(expect.arrayContaining(['expires_at', 'sponsored_by_you']));
    expect(Object.keys(other).sort()).toEqual(['since', 'source', 'tier']);
    expect(Object.keys(withProfile).sort()).toEqual(['name', 'picture', 'sub', 'updated_at']);
    expect(Object.keys(withoutProfile)).toEqual(['sub']);
  });
});
