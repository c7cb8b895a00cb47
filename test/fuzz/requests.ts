import fc from 'fast-check';
import { DEFAULT_BODY_LIMIT_BYTES, findGatewayRoute, type JsonObject } from '@svc/contracts';
import { basicAuthorization } from '../support/factories';
import { resolve } from '../support/contract';
import { anyHostileValue, hinted, operations, validValue, wrongValue } from './schema-arbitrary';
import type { Hints, Operation, Parameter } from './schema-arbitrary';

/**
 * One hostile request per draw: an operation of the description (or one of the routes it leaves
 * out on purpose: the sign-in form, the internal API, the apps' probes, unknown paths), schema-valid
 * parameters and body with real credentials, then one mutation. Bodies are built as bytes, so
 * invalid UTF-8, duplicate keys and nesting no JSON encoder would write can be sent.
 */

export interface FuzzCredentials {
  /** alex.morgan's access token for sandbox-partner: never revoked or refreshed by the fuzzer. */
  readonly accessToken: string;
  /** Tokens the fuzzer may spend at /oauth/token and /oauth/revoke. */
  readonly spareTokens: readonly string[];
  readonly partners: readonly { readonly id: string; readonly secret: string }[];
  readonly redirectUris: readonly string[];
  readonly vesselsCursor?: string;
  readonly seatsCursor?: string;
  readonly seatIds: readonly string[];
  readonly userIds: readonly string[];
  readonly emails: readonly string[];
  readonly externalRefs: readonly string[];
  /** A signed-in member's session cookie and the consent form's fields (csrf, the request's param.*). */
  readonly session?: { readonly cookie: string; readonly form: Readonly<Record<string, string>> };
}

export type Body = Buffer | { readonly huge: number; readonly contentPrefix: string };

export interface FuzzRequest {
  /** The operation (`METHOD /template`) or the undescribed route it aims at; the report groups by it. */
  readonly target: string;
  readonly mutation: string;
  readonly method: string;
  /** Path and query, exactly as sent. */
  readonly path: string;
  /** In order; a name may repeat. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: Body;
}

type Headers = [string, string][];

interface Draft {
  op: Operation;
  params: Record<string, unknown>;
  body: unknown;
  auth: Headers;
  form: Record<string, string>;
}

const HUGE_EXTRA = 64 * 1024;
const DEEP = [2_000, 20_000, 200_000];

/** Header values Node will send: printable ASCII and Latin-1 bytes (the latter on purpose). */
const headerSafe = (v: string) => v.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
/** Path text Node will send: everything outside visible ASCII percent-encoded. */
const pathSafe = (v: string) =>
  v.replace(/[^\x21-\x7e]/gu, (c) =>
    [...Buffer.from(c)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
  );

/** encodeURIComponent that takes lone surrogates too (as U+FFFD). */
const enc = (v: string) => new URLSearchParams([['', v]]).toString().slice(1);

const asText = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined ? '' : (JSON.stringify(v) ?? String(v));

function encodeQuery(params: Record<string, unknown>, op: Operation): string {
  const q = new URLSearchParams();
  for (const p of op.parameters.filter((x) => x.in === 'query')) {
    const v = params[p.name];
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) q.append(p.name, asText(item));
    else q.append(p.name, asText(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

function fillPath(op: Operation, params: Record<string, unknown>, raw = false): string {
  return op.template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = asText(params[name] ?? 'x');
    return raw ? pathSafe(v) : enc(v) || 'x';
  });
}

function hintsFor(c: FuzzCredentials, spendable: boolean): Hints {
  const secrets = c.partners.map((p) => p.secret);
  return {
    email: c.emails,
    external_ref: c.externalRefs,
    user_id: c.userIds,
    active_refs: [[...c.emails, ...c.externalRefs], [c.emails[0]], ['nobody@sandbox.test']],
    sponsorship_id: c.seatIds,
    client_id: c.partners.map((p) => p.id),
    client_secret: secrets,
    redirect_uri: c.redirectUris,
    // Spendable tokens only: the access token the rest of the run relies on is never sent here.
    ...(spendable ? { token: c.spareTokens, refresh_token: c.spareTokens } : {}),
    cursor: [c.vesselsCursor, c.seatsCursor].filter((x): x is string => Boolean(x)),
    csrf: c.session ? [c.session.form.csrf] : [],
  };
}

function paramArbitrary(p: Parameter, hints: Hints): fc.Arbitrary<unknown> {
  const withHints = hinted(p.name, validValue(p.schema, hints), hints);
  return p.required ? withHints : fc.option(withHints, { nil: undefined, freq: 3 });
}

function authArbitrary(
  op: Operation,
  c: FuzzCredentials,
): fc.Arbitrary<{ auth: Headers; form: Record<string, string> }> {
  const none = { auth: [] as Headers, form: {} };
  switch (op.security) {
    case 'bearer':
      return fc.constant({ auth: [['authorization', `Bearer ${c.accessToken}`]], form: {} });
    case 'partnerBasic':
      // Mostly the partner that may do everything, so requests reach past the 403s.
      return fc
        .oneof(
          { weight: 4, arbitrary: fc.constant(c.partners[0]) },
          { weight: 1, arbitrary: fc.constantFrom(...c.partners) },
        )
        .map((p) => ({ auth: [['authorization', basicAuthorization(p.id, p.secret)]], form: {} }));
    case 'clientCredentials':
      return fc
        .constantFrom(...c.partners)
        .chain((p) =>
          fc.constantFrom<{ auth: Headers; form: Record<string, string> }>(
            { auth: [], form: { client_id: p.id, client_secret: p.secret } },
            { auth: [['authorization', basicAuthorization(p.id, p.secret)]], form: {} },
          ),
        );
    case 'memberSession':
      return fc.constant(c.session ? { auth: [['cookie', c.session.cookie]] as Headers, form: {} } : none);
    case 'none':
      return fc.constant(none);
  }
}

function draftArbitrary(op: Operation, c: FuzzCredentials): fc.Arbitrary<Draft> {
  const spendable = op.template.startsWith('/oauth/');
  const hints = hintsFor(c, spendable);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const p of op.parameters) model[p.name] = paramArbitrary(p, hints);
  const body = op.body ? validValue(op.body.schema, hints) : fc.constant(undefined);
  return fc
    .record({ params: fc.record(model), body, auth: authArbitrary(op, c) })
    .map(({ params, body, auth }) => {
      let finalBody = body;
      if (
        op.template === '/oauth/authorize' &&
        op.method === 'POST' &&
        c.session &&
        body &&
        typeof body === 'object'
      )
        finalBody = { ...c.session.form, ...(body as object) };
      return { op, params, body: finalBody, auth: auth.auth, form: auth.form };
    });
}

function encodeBody(op: Operation, body: unknown, form: Record<string, string>): Buffer | undefined {
  if (!op.body) return undefined;
  if (op.body.contentType === 'application/x-www-form-urlencoded') {
    const q = new URLSearchParams();
    const fields =
      body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    for (const [k, v] of Object.entries({ ...fields, ...form })) q.append(k, asText(v));
    return Buffer.from(q.toString());
  }
  return Buffer.from(JSON.stringify(body) ?? 'null');
}

/** The request as the draft describes it, unmutated. */
function assemble(d: Draft, mutation: string, over: Partial<FuzzRequest> = {}): FuzzRequest {
  const headers: Headers = [...d.auth];
  for (const p of d.op.parameters.filter((x) => x.in === 'header')) {
    const v = d.params[p.name];
    if (v !== undefined && p.name.toLowerCase() !== 'authorization')
      headers.push([p.name.toLowerCase(), headerSafe(asText(v))]);
  }
  const body = encodeBody(d.op, d.body, d.form);
  if (body) headers.push(['content-type', d.op.body!.contentType]);
  return {
    target: d.op.key,
    mutation,
    method: d.op.method,
    path: fillPath(d.op, d.params) + encodeQuery(d.params, d.op),
    headers,
    body,
    ...over,
  };
}

const replaceHeader = (
  headers: readonly (readonly [string, string])[],
  name: string,
  value?: string,
): Headers => {
  const out = headers.filter(([k]) => k !== name) as Headers;
  if (value !== undefined) out.push([name, value]);
  return out;
};

// ---- mutations ----------------------------------------------------------------------------------

type Mutation = (d: Draft, c: FuzzCredentials) => fc.Arbitrary<FuzzRequest>;

const valid: Mutation = (d) => fc.constant(assemble(d, 'valid'));

const wrongTypes: Mutation = (d) => {
  const bodySchema = d.op.body ? resolve(d.op.body.schema) : undefined;
  const fields = Object.entries((bodySchema?.properties ?? {}) as Record<string, JsonObject>);
  const choices: fc.Arbitrary<FuzzRequest>[] = [];
  for (const p of d.op.parameters.filter((x) => x.in !== 'header'))
    choices.push(
      wrongValue(p.schema).map((v) => assemble({ ...d, params: { ...d.params, [p.name]: v } }, 'wrong-type')),
    );
  for (const [name, schema] of fields)
    choices.push(
      wrongValue(schema).map((v) =>
        assemble({ ...d, body: { ...(d.body as object), [name]: v } }, 'wrong-type'),
      ),
    );
  if (d.op.body) choices.push(anyHostileValue.map((v) => assemble({ ...d, body: v }, 'wrong-type')));
  return choices.length ? fc.oneof(...choices) : fc.constant(assemble(d, 'wrong-type'));
};

const missingOrExtra: Mutation = (d) =>
  fc
    .tuple(fc.boolean(), fc.string({ minLength: 1, maxLength: 10 }), anyHostileValue)
    .map(([drop, key, value]) => {
      if (!d.op.body || !d.body || typeof d.body !== 'object') return assemble(d, 'fields');
      const body = { ...(d.body as Record<string, unknown>) };
      const keys = Object.keys(body);
      if (drop && keys.length) delete body[keys[key.length % keys.length]];
      else body[key] = value;
      return assemble({ ...d, body }, 'fields');
    });

const GARBAGE_TEXT = [
  '',
  '{',
  '}',
  '[',
  '{"a":',
  'nul',
  'tru',
  '"unterminated',
  '{"a":1}x',
  '\ufeff{}',
  '1e999999',
  '{"a":NaN}',
  ' ',
];
const invalidJson: Mutation = (d) =>
  fc
    .oneof(fc.constantFrom(...GARBAGE_TEXT), fc.string({ unit: 'binary', maxLength: 60 }))
    .map((text) => assemble(d, 'invalid-body', { body: Buffer.from(text), headers: withBodyType(d) }));

function withBodyType(d: Draft): Headers {
  return replaceHeader(assemble(d, '').headers, 'content-type', d.op.body?.contentType ?? 'application/json');
}

const INVALID_UTF8 = [
  Buffer.from([0xff]),
  Buffer.from([0xc3, 0x28]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
  Buffer.from([0xe2, 0x82]),
];
const invalidUtf8: Mutation = (d) =>
  fc
    .tuple(fc.constantFrom(...INVALID_UTF8), fc.nat(), fc.constantFrom('body', 'query', 'header'))
    .map(([bad, at, where]) => {
      const base = assemble(d, 'invalid-utf8');
      if (where === 'body' && base.body instanceof Buffer && base.body.length > 0) {
        // Inside a string literal when there is one, so the JSON stays well-formed apart from the bytes.
        const text = base.body;
        const quote = text.indexOf(0x22, at % text.length);
        const i = quote >= 0 ? quote + 1 : at % text.length;
        return { ...base, body: Buffer.concat([text.subarray(0, i), bad, text.subarray(i)]) };
      }
      if (where === 'header')
        return { ...base, headers: [...base.headers, ['x-request-id', bad.toString('latin1')]] as Headers };
      const sep = base.path.includes('?') ? '&' : '?';
      // Percent-encoded invalid UTF-8 half the time (what decoders choke on), raw bytes otherwise.
      const text = at % 2 ? [...bad].map((b) => `%${b.toString(16)}`).join('') : bad.toString('latin1');
      return {
        ...base,
        path: `${base.path}${sep}${d.op.parameters.find((p) => p.in === 'query')?.name ?? 'q'}=${text}`,
      };
    });

const duplicateKeys: Mutation = (d) =>
  fc.tuple(anyHostileValue, fc.boolean()).map(([other, first]) => {
    if (!d.op.body || !d.body || typeof d.body !== 'object' || Array.isArray(d.body))
      return assemble(d, 'duplicate-keys');
    const entries = Object.entries(d.body as Record<string, unknown>);
    if (entries.length === 0) return assemble(d, 'duplicate-keys');
    const [k, v] = entries[0];
    const dup = `${JSON.stringify(k)}:${JSON.stringify(other) ?? 'null'}`;
    const own = entries.map(([key, val]) => `${JSON.stringify(key)}:${JSON.stringify(val) ?? 'null'}`);
    const text =
      d.op.body.contentType === 'application/x-www-form-urlencoded'
        ? `${encodeBody(d.op, d.body, d.form)!.toString()}&${enc(k)}=${enc(asText(other ?? v))}`
        : `{${first ? [dup, ...own].join(',') : [...own, dup].join(',')}}`;
    return assemble(d, 'duplicate-keys', { body: Buffer.from(text), headers: withBodyType(d) });
  });

const deepNesting: Mutation = (d) =>
  fc.tuple(fc.constantFrom(...DEEP), fc.boolean()).map(([depth, arrays]) => {
    const open = arrays ? '[' : '{"a":';
    const close = arrays ? ']' : '}';
    const text = `${open.repeat(depth)}1${close.repeat(depth)}`;
    return assemble(d, 'deep-body', { body: Buffer.from(text), headers: withBodyType(d) });
  });

const hugeBody: Mutation = (d) => {
  const limit = bodyLimit(d.op);
  return fc.integer({ min: 1, max: HUGE_EXTRA }).map((extra) =>
    assemble(d, 'huge-body', {
      body: {
        huge: limit + extra,
        contentPrefix: d.op.body?.contentType === 'application/json' ? '{"active_refs":["' : 'a=',
      },
      headers: withBodyType(d),
    }),
  );
};

/** Lots of entries just under the body limit: the most work a valid-looking request can ask for. */
const bigValid: Mutation = (d) =>
  fc.integer({ min: 1_000, max: 50_000 }).map((n) => {
    if (d.op.body?.contentType !== 'application/json') return assemble(d, 'big-body');
    const refs = Array.from({ length: n }, (_, i) => `ref-${i}@fuzz.test`);
    const body = {
      ...(typeof d.body === 'object' && d.body ? d.body : {}),
      active_refs: refs,
      user_id: refs[0],
    };
    const text = JSON.stringify(body);
    return assemble(d, 'big-body', {
      body: Buffer.from(text.length < bodyLimit(d.op) ? text : text.slice(0, bodyLimit(d.op) - 1)),
    });
  });

/** The route table is where the gateway's and the apps' body limits come from. */
function bodyLimit(op: Operation): number {
  return findGatewayRoute(op.template)?.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
}

const CONTENT_TYPES = [
  undefined,
  '',
  'text/plain',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'application/json, text/plain',
  'application/jsonx',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=----x',
  'application/json; boundary=;;;;',
  'application/problem+json',
  '*/*',
  '\xff\xfe',
  'application/json;' + 'a=b;'.repeat(500),
];
const contentTypes: Mutation = (d) =>
  fc.constantFrom(...CONTENT_TYPES).map((type) => {
    const base = assemble(d, 'content-type');
    return {
      ...base,
      headers: replaceHeader(base.headers, 'content-type', type),
      body: base.body ?? Buffer.from('{}'),
    };
  });

const ODD_HEADERS: readonly Headers[] = [
  [['accept', 'application/xml']],
  [['accept', '*/*;q=abc, text/html;q=2']],
  [['accept', `${'application/json;q=0.1, '.repeat(300)}*/*`]],
  [['accept-encoding', 'gzip;q=x, br, zstd, compress, identity;q=0']],
  [['x-junk', 'j'.repeat(9_000)]],
  [['x-junk', 'j'.repeat(40_000)]],
  Array.from({ length: 200 }, (_, i) => [`x-many-${i}`, 'v'] as [string, string]),
  [['if-none-match', '*']],
  [['if-none-match', 'W/"x", "y", garbage, ""']],
  [['if-none-match', '"' + 'e'.repeat(4000) + '"']],
  [['if-modified-since', 'Mon, 32 Foo 99999 99:99:99 GMT']],
  [['if-modified-since', 'Thu, 01 Jan 2099 00:00:00 GMT']],
  [['if-modified-since', '0']],
  [['x-request-id', 'bad id\xff']],
  [['x-request-id', 'a'.repeat(5000)]],
  [
    ['x-request-id', 'one'],
    ['x-request-id', 'two'],
  ],
  [['content-length', '0']],
  [['transfer-encoding', 'gzip']],
  [['expect', '100-continue']],
  [['expect', 'something-else']],
  [['range', 'bytes=0-1,5-6']],
  [['host', 'evil.example']],
  [['x-forwarded-for', '1.2.3.4, ::1, garbage']],
  [['x-forwarded-proto', 'gopher']],
  [['cookie', `svc_session=${'s'.repeat(3000)}; __Host-svc_session=x`]],
  [
    ['connection', 'upgrade'],
    ['upgrade', 'websocket'],
  ],
];
const oddHeaders: Mutation = (d) =>
  fc.constantFrom(...ODD_HEADERS).map((extra) => {
    const base = assemble(d, 'odd-headers');
    let headers = base.headers as Headers;
    for (const [k] of extra)
      if (['x-request-id', 'content-length', 'host', 'cookie'].includes(k))
        headers = replaceHeader(headers, k);
    return { ...base, headers: [...headers, ...extra] };
  });

const duplicatedHeaders: Mutation = (d, c) =>
  fc.constantFrom('authorization', 'content-type', 'if-none-match', 'cookie').map((name) => {
    const base = assemble(d, 'duplicate-headers');
    const values: Record<string, string[]> = {
      authorization: [`Bearer ${c.accessToken}`, basicAuthorization(c.partners[0].id, c.partners[0].secret)],
      'content-type': ['application/json', 'text/plain'],
      'if-none-match': ['"a"', '"b"'],
      cookie: ['a=1', 'svc_session=forged'],
    };
    return {
      ...base,
      headers: [
        ...replaceHeader(base.headers, name),
        ...values[name].map((v) => [name, v] as [string, string]),
      ],
    };
  });

function forgedToken(c: FuzzCredentials): fc.Arbitrary<string> {
  const prefix = /^[a-z]+_/.exec(c.accessToken)?.[0] ?? '';
  return fc.oneof(
    fc.string({ minLength: 0, maxLength: 60 }).map((s) => `${prefix}${s}`),
    fc.base64String({ minLength: 4, maxLength: 64 }).map((s) => `${prefix}${s}`),
    fc.constant(`${prefix}${'A'.repeat(43)}`),
    fc.constant(c.accessToken.slice(0, -1) + (c.accessToken.endsWith('A') ? 'B' : 'A')),
    fc.constant(c.accessToken + c.accessToken),
    fc.integer({ min: 1_000, max: 7_000 }).map((n) => `${prefix}${'t'.repeat(n)}`),
    fc.constant('x'.repeat(20_000)),
    fc.constant(''),
    fc.string({ unit: 'binary', maxLength: 40 }),
  );
}

const FORGED_SCHEMES = ['Bearer', 'bearer', 'BEARER', 'Basic', 'Bearer  ', 'Token', 'Bearer\t', ''];
const forgedAuth: Mutation = (d, c) =>
  fc
    .tuple(
      fc.constantFrom(...FORGED_SCHEMES),
      forgedToken(c),
      fc.constantFrom('header', 'basic', 'form', 'query'),
    )
    .map(([scheme, token, how]) => {
      const base = assemble(d, 'forged-auth');
      const headers = replaceHeader(base.headers, 'authorization');
      if (how === 'basic') {
        const pair = Buffer.from(`${c.partners[0].id}:${token}`).toString(
          token.length % 2 ? 'base64' : 'latin1',
        );
        return { ...base, headers: [...headers, ['authorization', headerSafe(`Basic ${pair}`)]] as Headers };
      }
      if (how === 'query')
        return {
          ...base,
          headers,
          path: `${base.path}${base.path.includes('?') ? '&' : '?'}access_token=${enc(token)}`,
        };
      if (how === 'form' && d.op.body?.contentType === 'application/x-www-form-urlencoded') {
        const q = new URLSearchParams((base.body as Buffer).toString());
        q.set(d.op.template === '/oauth/revoke' ? 'token' : 'refresh_token', token);
        q.set('client_secret', token);
        return { ...base, body: Buffer.from(q.toString()) };
      }
      return {
        ...base,
        headers: [...headers, ['authorization', headerSafe(`${scheme} ${token}`)]] as Headers,
      };
    });

function flipBit(cursor: string, bit: number): string {
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.length === 0) return `${cursor}A`;
  const i = bit % (bytes.length * 8);
  bytes[i >> 3] ^= 1 << (i & 7);
  return bytes.toString('base64url');
}

const forgedCursor: Mutation = (d, c) => {
  const real = d.op.template === '/v1/me/vessels' ? c.vesselsCursor : c.seatsCursor;
  const cursors = fc.oneof(
    fc.base64String({ maxLength: 120 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('', '=', 'null', '{}', '%ZZ', 'A'.repeat(10_000)),
    real ? fc.nat().map((bit) => flipBit(real, bit)) : fc.constant('x'),
    real ? fc.constantFrom(real.slice(1), `${real}A`, real.split('').reverse().join('')) : fc.constant('y'),
    fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v)).toString('base64url')),
  );
  return cursors.map((cursor) => assemble({ ...d, params: { ...d.params, cursor } }, 'forged-cursor'));
};

const oddPath: Mutation = (d) =>
  fc
    .constantFrom(
      (p: string) => `${p}/`,
      (p: string) => `${p}//`,
      (p: string) => `${p}/..`,
      (p: string) => `${p}/%2e%2e/%2e%2e/internal/v1/users`,
      (p: string) => `${p}%00`,
      (p: string) => `${p}%2F`,
      (p: string) => `${p};jsessionid=1`,
      (p: string) => `${p}?%ZZ=%`,
      (p: string) => `${p}?limit=1&limit=2&status=a&status=b`,
      (p: string) => `${p}?limit[]=1&cursor[a]=b`,
      (p: string) => `${p}?${'q=1&'.repeat(2000)}`,
      (p: string) => `${p}?x=${'%41'.repeat(3000)}`,
      (p: string) => p.toUpperCase(),
      (p: string) => `${p}#frag`,
    )
    .chain((f) =>
      fc.oneof(
        fc.constant(f),
        fc.string({ unit: 'binary', maxLength: 20 }).map((s) => (p: string) => `${p}/${pathSafe(s)}`),
      ),
    )
    .map((f) => {
      const base = assemble(d, 'odd-path');
      const [path, query] = base.path.split('?');
      return { ...base, path: pathSafe(f(query === undefined ? path : `${path}?${query}`)) };
    });

const oddPathParams: Mutation = (d) =>
  fc
    .oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.constantFrom(
        '..',
        '.',
        '%2e%2e',
        'sps_',
        'x'.repeat(5000),
        "' OR 1=1 --",
        '\u0000',
        'sps_sandbox_alex_morgan/../x',
      ),
    )
    .map((v) => {
      const params = { ...d.params };
      for (const p of d.op.parameters.filter((x) => x.in === 'path')) params[p.name] = v;
      return assemble({ ...d, params }, 'odd-path-param', {
        path: fillPath(d.op, params, true) + encodeQuery(params, d.op),
      });
    });

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'get'];
const otherMethod: Mutation = (d) =>
  fc
    .constantFrom(...METHODS.filter((m) => m !== d.op.method))
    .map((method) => assemble(d, 'method', { method }));

const MUTATIONS: readonly {
  weight: number;
  make: Mutation;
  when?: (op: Operation) => boolean;
}[] = [
  { weight: 30, make: valid },
  { weight: 12, make: wrongTypes },
  { weight: 5, make: missingOrExtra, when: (op) => Boolean(op.body) },
  { weight: 4, make: invalidJson, when: (op) => Boolean(op.body) },
  { weight: 5, make: invalidUtf8 },
  { weight: 4, make: duplicateKeys, when: (op) => Boolean(op.body) },
  { weight: 2, make: deepNesting, when: (op) => Boolean(op.body) },
  { weight: 1, make: bigValid, when: (op) => op.body?.contentType === 'application/json' },
  { weight: 5, make: contentTypes },
  { weight: 8, make: oddHeaders },
  { weight: 3, make: duplicatedHeaders },
  { weight: 8, make: forgedAuth, when: (op) => op.security !== 'none' },
  { weight: 6, make: forgedCursor, when: (op) => op.parameters.some((p) => p.name === 'cursor') },
  { weight: 4, make: oddPath },
  { weight: 4, make: oddPathParams, when: (op) => op.parameters.some((p) => p.in === 'path') },
  { weight: 3, make: otherMethod },
  // About 1 in 100 requests to an operation with a body sends one over its limit: each is
  // megabytes on the wire, enough of them to show the 413 holds on every such operation.
  { weight: 1, make: hugeBody, when: (op) => Boolean(op.body) },
];

// ---- routes the description leaves out ----------------------------------------------------------

function loginRequests(c: FuzzCredentials): fc.Arbitrary<FuzzRequest> {
  const field = fc.oneof(
    fc.constantFrom(...c.emails, 'sandbox-password', ''),
    fc.string({ maxLength: 30 }),
    anyHostileValue.map(asText),
  );
  const form = fc.dictionary(
    fc.constantFrom('email', 'password', 'csrf', 'return_to', 'next', fc.toString()),
    field,
    { maxKeys: 5 },
  );
  return fc.oneof(
    fc.constant<FuzzRequest>({
      target: 'GET /login',
      mutation: 'valid',
      method: 'GET',
      path: '/login',
      headers: [],
    }),
    fc.string({ maxLength: 80 }).map((s) => ({
      target: 'GET /login',
      mutation: 'odd-path',
      method: 'GET',
      path: pathSafe(`/login?return_to=${enc(s)}&${s}`),
      headers: [],
    })),
    fc
      .tuple(
        form,
        fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain', undefined),
        fc.constantFrom(...INVALID_UTF8),
        fc.boolean(),
      )
      .map(([fields, type, bad, corrupt]) => {
        const text = new URLSearchParams(
          Object.entries(fields).map(([k, v]): [string, string] => [k, asText(v)]),
        ).toString();
        const body = corrupt
          ? Buffer.concat([Buffer.from(text), Buffer.from('&email='), bad])
          : Buffer.from(text);
        return {
          target: 'POST /login',
          mutation: corrupt ? 'invalid-utf8' : 'valid',
          method: 'POST',
          path: '/login',
          headers: type === undefined ? [] : ([['content-type', type]] as Headers),
          body,
        };
      }),
  );
}

/** The internal records API and the apps' probes: never reachable without the internal token. */
function internalRequests(c: FuzzCredentials): fc.Arbitrary<FuzzRequest> {
  const paths = fc.constantFrom(
    '/internal/v1/users?email=alex.morgan%40sandbox.test',
    '/internal/v1/crew',
    `/internal/v1/crew/${c.userIds[0]}/profile`,
    `/internal/v1/crew/${c.userIds[0]}/sea-time-entries`,
    '/readyz',
    '/metrics',
    '/v1/me/../../internal/v1/users',
    '/v1/partners/..%2f..%2finternal/v1/crew',
  );
  const auth = fc.constantFrom<Headers>(
    [],
    [['authorization', `Bearer ${c.accessToken}`]],
    [['authorization', 'Bearer sandbox-internal-tokem']],
    [['authorization', basicAuthorization(c.partners[0].id, c.partners[0].secret)]],
  );
  return fc.tuple(paths, auth, fc.constantFrom('GET', 'POST', 'PATCH')).map(([path, headers, method]) => ({
    target: `${method} internal`,
    mutation: 'unreachable',
    method,
    path,
    headers: method === 'GET' ? headers : [...headers, ['content-type', 'application/json']],
    body:
      method === 'GET'
        ? undefined
        : Buffer.from('{"email":"fuzz@sandbox.test","name":"F","role":"x","country":"GB"}'),
  }));
}

const unknownPaths: fc.Arbitrary<FuzzRequest> = fc
  .oneof(
    fc.constantFrom(
      '/',
      '/v1',
      '/v2/me',
      '/v1/me/nope',
      '/oauth',
      '/oauth/tokens',
      '/.env',
      '/docs/../../etc/passwd',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/v1/partners/sponsorships/a/b/c',
    ),
    fc.webPath().map((p) => p || '/'),
  )
  .chain((path) => fc.constantFrom('GET', 'POST', 'DELETE').map((method) => ({ path, method })))
  .map(({ path, method }) => ({
    target: `${method} unknown`,
    mutation: 'unknown-path',
    method,
    path: pathSafe(path),
    headers: [],
  }));

/** Every request of a run, drawn from one seed: the operations of the description in equal shares, plus the rest. */
export function requestArbitrary(c: FuzzCredentials): fc.Arbitrary<FuzzRequest> {
  const perOperation = operations().map((op) => {
    const drafts = draftArbitrary(op, c);
    const mutated = MUTATIONS.filter((m) => !m.when || m.when(op)).map(({ weight, make }) => ({
      weight,
      arbitrary: drafts.chain((d) => make(d, c)),
    }));
    return { weight: 10, arbitrary: fc.oneof(...mutated) };
  });
  return fc.oneof(
    ...perOperation,
    { weight: 10, arbitrary: loginRequests(c) },
    { weight: 4, arbitrary: internalRequests(c) },
    { weight: 3, arbitrary: unknownPaths },
  );
}
