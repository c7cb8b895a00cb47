/**
 * docs/configuration.md, generated from the config specs the apps validate at start-up
 * (`apps/<app>/src/config.ts`, the shared groups of libs/platform and libs/security) and the
 * gateway's (`GATEWAY_CONFIG`, apps/gateway/src/gateway-options.ts). `npm run docs:config` writes
 * the page; a unit test
 * (test/docs/configuration-reference.spec.ts) fails when the committed page differs.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  AMQP_CONFIG,
  BASE_CONFIG,
  DATABASE_CONFIG,
  MIGRATION_CONFIG,
  OUTBOX_CONFIG,
  REDIS_CONFIG,
  type AppEnv,
  type ConfigSpec,
  type VarSpec,
} from '@svc/platform';
import { FAILED_AUTH_CONFIG, RATE_LIMIT_CONFIG } from '@svc/security';
import { AUTH_SERVER_CONFIG } from '../../apps/auth-server/src/config';
import { CONSENT_UI_CONFIG } from '../../apps/consent-ui/src/config';
import { CREW_API_CONFIG } from '../../apps/crew-api/src/config';
import { SPONSORSHIP_API_CONFIG } from '../../apps/sponsorship-api/src/config';
import { WEBHOOK_DISPATCHER_CONFIG } from '../../apps/webhook-dispatcher/src/config';
import { GATEWAY_CONFIG } from '../../apps/gateway/src/gateway-options';

export const CONFIGURATION_DOC = 'docs/configuration.md';

const ROOT = path.resolve(__dirname, '..', '..');

/** Formats markdown as `prettier --check .` wants it (the repository's .prettierrc), through the CLI. */
export function formatMarkdown(markdown: string): string {
  return execFileSync(
    path.join(ROOT, 'node_modules', '.bin', 'prettier'),
    ['--stdin-filepath', CONFIGURATION_DOC],
    {
      cwd: ROOT,
      input: markdown,
      encoding: 'utf8',
    },
  );
}

/** Each app's whole spec, as its `loadConfigOrExit` reads it. */
export const APP_SPECS: Readonly<Record<string, ConfigSpec>> = {
  'auth-server': AUTH_SERVER_CONFIG,
  'consent-ui': CONSENT_UI_CONFIG,
  'crew-api': CREW_API_CONFIG,
  'sponsorship-api': SPONSORSHIP_API_CONFIG,
  'webhook-dispatcher': WEBHOOK_DISPATCHER_CONFIG,
};

/** Groups shared by several apps, in page order; what an app declares itself follows them. */
const SHARED_GROUPS: readonly { title: string; note?: string; spec: ConfigSpec }[] = [
  { title: 'Every app', spec: BASE_CONFIG },
  {
    title: 'PostgreSQL',
    note: '`DATABASE_APP_ROLE` is read by `cli.js migrate` of every app, which runs as the schemas\u2019 owner.',
    spec: { ...DATABASE_CONFIG, ...MIGRATION_CONFIG },
  },
  {
    title: 'Redis',
    note:
      'The state Redis (`REDIS_URL`, `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES`, exactly one) must run `noeviction`; ' +
      'the token cache (`REDIS_CACHE_*`, at most one; unset: the state Redis) may evict (`allkeys-lru`). ' +
      'See [architecture, "Token introspection cache and Redis"](architecture.md#token-introspection-cache-and-redis).',
    spec: REDIS_CONFIG,
  },
  { title: 'RabbitMQ', spec: AMQP_CONFIG },
  { title: 'Outbox', spec: OUTBOX_CONFIG },
  {
    title: 'Rate limits and failed authentication',
    note: 'See [architecture, "Rate limits"](architecture.md#rate-limits) and [security](security.md).',
    spec: { ...RATE_LIMIT_CONFIG, ...FAILED_AUTH_CONFIG },
  },
];

/** What the gateway reads as the apps do; its own variables get a section of their own. */
export const GATEWAY_SHARED_VARIABLES = ['APP_ENV', 'PUBLIC_BASE_URL', 'DOCS_URL'] as const;

interface Row {
  readonly name: string;
  readonly description: string;
  readonly production: string;
  readonly sandbox: string;
  readonly secret: boolean;
  readonly readBy: readonly string[];
}

const code = (value: string): string => (value === '' ? 'empty' : `\`${value}\``);

/** A markdown table cell: pipes escaped, one line. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/**
 * The value a spec takes when its variable is unset: the default it declares, else what parsing
 * nothing gives (`required` when that throws, `unset` when it yields nothing).
 */
function defaultOf(spec: VarSpec<unknown>, appEnv: AppEnv): string {
  const declared = appEnv === 'sandbox' ? (spec.sandboxDefault ?? spec.default) : spec.default;
  if (declared !== undefined) return code(declared);
  let value: unknown;
  try {
    value = spec.parse(undefined, appEnv, { APP_ENV: appEnv });
  } catch {
    return 'required';
  }
  if (value === undefined) return 'unset';
  return code(Array.isArray(value) ? value.join(',') : String(value));
}

function readersOf(name: string): string[] {
  const apps = Object.entries(APP_SPECS)
    .filter(([, spec]) => name in spec)
    .map(([app]) => app);
  const readers = apps.length === Object.keys(APP_SPECS).length ? ['every app'] : apps;
  if (name in MIGRATION_CONFIG) readers.push('every app\u2019s `cli.js migrate`');
  if ((GATEWAY_SHARED_VARIABLES as readonly string[]).includes(name)) readers.push('gateway');
  return readers;
}

/**
 * A description as the page shows it: a citation of the rules page, there for readers of the
 * code, is dropped from the reference.
 */
function describe(description: string): string {
  return description.replace(/\s*\(docs\/rules\.md[^)]*\)/g, '');
}

function specRows(spec: ConfigSpec): Row[] {
  return Object.entries(spec).map(([name, varSpec]) => ({
    name,
    description: describe(varSpec.description),
    production: defaultOf(varSpec, 'production'),
    // APP_ENV chooses between the two columns: the sandbox is APP_ENV=sandbox.
    sandbox: name === 'APP_ENV' ? code('sandbox') : defaultOf(varSpec, 'sandbox'),
    secret: varSpec.secret === true,
    readBy: readersOf(name),
  }));
}

function gatewayRows(): Row[] {
  const own = Object.entries(GATEWAY_CONFIG).filter(
    ([name]) => !(GATEWAY_SHARED_VARIABLES as readonly string[]).includes(name),
  );
  return specRows(Object.fromEntries(own)).map((row) => ({ ...row, readBy: ['gateway'] }));
}

function table(rows: readonly Row[], withReaders: boolean): string[] {
  const head = ['variable', 'what it sets', 'production default', 'sandbox default', 'secret'];
  if (withReaders) head.push('read by');
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`];
  for (const r of rows) {
    const cells = [`\`${r.name}\``, cell(r.description), r.production, r.sandbox, r.secret ? 'yes' : 'no'];
    if (withReaders) cells.push(r.readBy.join(', '));
    lines.push(`| ${cells.map(cell).join(' | ')} |`);
  }
  return lines;
}

/** The whole page, as `npm run docs:config` writes it (before Prettier, which the script then runs). */
export function renderConfigurationReference(): string {
  const shared = new Set(SHARED_GROUPS.flatMap((g) => Object.keys(g.spec)));
  const out: string[] = [
    '<!-- Generated by `npm run docs:config` from the apps\u2019 config specs (scripts/docs/configuration-reference.ts); do not edit. -->',
    '',
    '# Configuration',
    '',
    'Every app validates its environment at start-up and refuses to start (exit 78) naming each bad or missing ' +
      'variable; `process.env` is read in one place (`loadConfigOrExit`, libs/platform). The gateway\u2019s generator ' +
      'does the same for its variables.',
    '',
    '- Without `APP_ENV` an app, and the gateway, run as production: no seeded data, no default secrets, and ' +
      '`/internal/*` is not routed. `npm start`, `npm test`, docker compose and the Kubernetes sandbox overlay set ' +
      '`APP_ENV=sandbox`.',
    '- A secret marked `required` in production has a published sandbox default; production refuses a missing, ' +
      'short or published value (the sandbox\u2019s own passwords and secrets included). A connection URL ' +
      '(`DATABASE_URL`, `AMQP_URL`) may carry a password, and production refuses one the sandbox publishes. ' +
      'Production also refuses `SESSION_COOKIE_SECURE=false`: session cookies are Secure outside local development.',
    '- Durations are written `500ms`, `30s`, `5m`, `2h` (the apps also take `1d`). "unset" means the variable is optional and its ' +
      'absence has the meaning its description gives.',
    '- `npm start` also sets each app\u2019s `PORT` (the ports are in [operations](operations.md#ports)), the ' +
      'service URLs it provisioned and `REDIS_KEY_PREFIX=<APP_ENV>:`; other variables of its environment pass ' +
      'through, e.g. `WEBHOOK_RETRY_SCHEDULE=2s,2s,2s,2s,2s npm start`. `npm test` gives each run its own database, ' +
      'vhost and key prefix ([testing](testing.md)).',
    '',
  ];
  for (const group of SHARED_GROUPS) {
    out.push(`## ${group.title}`, '');
    if (group.note) out.push(group.note, '');
    out.push(...table(specRows(group.spec), true), '');
  }
  for (const [app, spec] of Object.entries(APP_SPECS)) {
    const own = Object.fromEntries(Object.entries(spec).filter(([name]) => !shared.has(name)));
    if (Object.keys(own).length === 0) continue;
    out.push(`## ${app}`, '', ...table(specRows(own), false), '');
  }
  out.push(
    '## gateway',
    '',
    'Read by `apps/gateway/src/generate.ts` when it writes the nginx configuration (`npm run build`, `npm start`, ' +
      'the gateway image at start-up), besides `APP_ENV`, `PUBLIC_BASE_URL` and `DOCS_URL` above.',
    '',
    ...table(gatewayRows(), false),
    '',
  );
  return out.join('\n');
}
