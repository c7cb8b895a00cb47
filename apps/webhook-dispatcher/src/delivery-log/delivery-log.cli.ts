import { parseArgs } from 'node:util';
import type { INestApplicationContext } from '@nestjs/common';
import { APP_SCHEMAS } from '@svc/contracts';
import {
  assertUnreachable,
  createLogger,
  DatabaseModule,
  PlatformModule,
  printLine as out,
  RouteIndex,
  runSubcommands,
  UsageError,
  withAppContext,
  type ConfigOf,
} from '@svc/platform';
import pino, { type Logger } from 'pino';
import type { WEBHOOK_DISPATCHER_CONFIG } from '../config';
import type { DeliveryStatus, LoggedAttempt, LoggedDelivery } from '../deliveries/deliveries.repository';
import { WEBHOOK_DISPATCHER_MIGRATIONS } from '../migrations';
import type { EndpointState } from '../partner-webhooks/partner-webhooks.repository';
import { DeliveryLogException } from './delivery-log.exception';
import { DeliveryLogModule } from './delivery-log.module';
import { DeliveryLogService } from './delivery-log.service';

const USAGE = `Webhook delivery log (operators and partner support).

  deliveries list --client CLIENT_ID [--status pending|delivered|failed|skipped] [--limit N] [--json]
      the partner's deliveries, newest first (default limit 50)
  deliveries show DELIVERY_ID [--json]
      one delivery and every attempt: number, time, status code, duration, error, next attempt
  deliveries redeliver DELIVERY_ID [--json]
      a fresh attempt series for a delivered or failed delivery: a new delivery id, the same event
      id and body, in the backlog for its first attempt in its partner's turn
  deliveries endpoint CLIENT_ID [--json]
      the partner's endpoint as the partner sees it: enabled or disabled (when, why), last success
      and failure, attempts and success rate of the last 24 h
  deliveries endpoint-disable CLIENT_ID
      stop attempting the partner's endpoint: new events are recorded as skipped (replayable)
  deliveries endpoint-enable CLIENT_ID
      attempt it again, without the test event the partner's own enable sends

Exit codes: 0 done, 2 unknown delivery or not redeliverable now, 64 bad command line,
1 anything else (e.g. PostgreSQL unreachable).`;

const STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed', 'skipped'];
const EXIT = { refused: 2, failed: 1 } as const;

type Config = ConfigOf<typeof WEBHOOK_DISPATCHER_CONFIG>;

/** `cli.js deliveries ...`, run through `npm run deliveries -- ...`. */
export async function deliveriesCommand(
  args: readonly string[],
  config: Config,
  _logger: Logger,
): Promise<void> {
  await runSubcommands('deliveries', USAGE, args, (command, rest) => run(command, rest, config), exitCodeOf);
}

/** The exit code of a refusal the operator can act on; anything else is 1. */
function exitCodeOf(err: unknown): number {
  if (!(err instanceof DeliveryLogException)) return EXIT.failed;
  switch (err.code) {
    case 'unknown_delivery':
    case 'still_pending':
      return EXIT.refused;
    default:
      return assertUnreachable(err.code);
  }
}

async function run(command: string, rest: readonly string[], config: Config): Promise<void> {
  switch (command) {
    case 'list': {
      // Strict: an unknown option or a stray argument is a usage error.
      const { values } = parseArgs({
        args: [...rest],
        options: {
          client: { type: 'string' },
          status: { type: 'string' },
          limit: { type: 'string', default: '50' },
          json: { type: 'boolean', default: false },
        },
      });
      if (!values.client) throw new UsageError('--client CLIENT_ID is required');
      const status = values.status;
      if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) {
        throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
      }
      const limit = Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
        throw new UsageError('--limit must be an integer from 1 to 1000');
      }
      const client = values.client;
      const rows = await withContext(config, (c) =>
        c.get(DeliveryLogService).list(client, status as DeliveryStatus | undefined, limit),
      );
      if (values.json) out(JSON.stringify(rows.map(asJson), null, 2));
      else printList(rows);
      return;
    }
    case 'show': {
      const { id, json } = oneId(rest);
      const detail = await withContext(config, (c) => c.get(DeliveryLogService).show(id));
      if (json) {
        out(
          JSON.stringify({ ...asJson(detail.delivery), attempt_log: detail.attempts.map(asJson) }, null, 2),
        );
      } else {
        printDetail(detail.delivery, detail.attempts);
      }
      return;
    }
    case 'redeliver': {
      const { id, json } = oneId(rest);
      const redelivery = await withContext(config, (c) => c.get(DeliveryLogService).redeliver(id));
      if (json) out(JSON.stringify(asJson(redelivery), null, 2));
      else {
        out(
          `${redelivery.deliveryId} queued: event ${redelivery.eventId} to ${redelivery.clientId} again ` +
            `(${redelivery.targetUrl}), a fresh series of attempts repeating ${id}.`,
        );
        out(`Follow it with: npm run deliveries -- show ${redelivery.deliveryId}`);
      }
      return;
    }
    case 'endpoint':
    case 'endpoint-disable':
    case 'endpoint-enable': {
      const { id: clientId, json } = oneId(rest, 'CLIENT_ID');
      const state = await withContext(config, (c) => {
        const log = c.get(DeliveryLogService);
        return command === 'endpoint'
          ? log.endpoint(clientId)
          : log.setEndpoint(clientId, command === 'endpoint-enable' ? 'enabled' : 'disabled');
      });
      if (json) out(JSON.stringify({ client_id: clientId, ...asJson(state) }, null, 2));
      else printEndpoint(clientId, state);
      return;
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

function oneId(rest: readonly string[], what = 'DELIVERY_ID'): { id: string; json: boolean } {
  const { values, positionals } = parseArgs({
    args: [...rest],
    options: { json: { type: 'boolean', default: false } },
    allowPositionals: true,
  });
  if (positionals.length !== 1) throw new UsageError(`exactly one ${what} is required`);
  return { id: positionals[0], json: values.json ?? false };
}

/**
 * The dispatcher's database without its consumers. Nest's own logging is off and the app's logs
 * go to stderr, so stdout carries only the answer.
 */
async function withContext<T>(
  config: Config,
  work: (context: INestApplicationContext) => Promise<T>,
): Promise<T> {
  const logger = createLogger('webhook-dispatcher', config.LOG_LEVEL, pino.destination(2));
  const imports = [
    PlatformModule.forRoot({ app: 'webhook-dispatcher-cli', config, logger, routes: new RouteIndex() }),
    DatabaseModule.forRoot({
      schema: APP_SCHEMAS['webhook-dispatcher'],
      migrations: WEBHOOK_DISPATCHER_MIGRATIONS,
    }),
    DeliveryLogModule,
  ];
  return withAppContext(imports, work);
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * A delivery or attempt as `--json` prints it: snake_case keys and ISO times, in the order the
 * repository selects the columns.
 */
function asJson(row: LoggedDelivery | LoggedAttempt | EndpointState): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row).map(([k, v]) => [
      k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
      v instanceof Date ? v.toISOString() : v,
    ]),
  );
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  out(line(header));
  for (const r of rows) out(line(r));
}

function printList(rows: readonly LoggedDelivery[]): void {
  if (rows.length === 0) {
    out('no deliveries');
    return;
  }
  table(
    ['DELIVERY', 'EVENT', 'TYPE', 'STATUS', 'ATTEMPTS', 'CREATED', 'NEXT ATTEMPT'],
    rows.map((d) => [
      d.deliveryId,
      d.eventId,
      d.eventType,
      d.status,
      String(d.attempts),
      iso(d.createdAt) ?? '-',
      iso(d.nextAttemptAt) ?? '-',
    ]),
  );
}

function printDetail(d: LoggedDelivery, attempts: readonly LoggedAttempt[]): void {
  const fields: [string, string][] = [
    ['delivery', d.deliveryId],
    ['event', `${d.eventId} (${d.eventType})`],
    ['partner', d.clientId],
    ['member', d.userId],
    ['target', d.targetUrl],
    ['status', `${d.status}, ${d.attempts} attempt(s)`],
    ['created', iso(d.createdAt) ?? '-'],
    ['next attempt', iso(d.nextAttemptAt) ?? '-'],
  ];
  if (d.redeliveryOf) fields.push(['redelivery of', d.redeliveryOf]);
  for (const [k, v] of fields) out(`${k.padEnd(14)}${v}`);
  out();
  if (attempts.length === 0) {
    out('no attempts yet');
    return;
  }
  table(
    ['#', 'STARTED', 'STATUS', 'DURATION', 'ERROR', 'NEXT ATTEMPT'],
    attempts.map((a) => [
      String(a.attempt),
      iso(a.startedAt) ?? '-',
      a.statusCode === null ? '-' : String(a.statusCode),
      `${a.durationMs} ms`,
      a.error ?? '-',
      iso(a.nextAttemptAt) ?? '-',
    ]),
  );
}

function printEndpoint(clientId: string, e: EndpointState): void {
  const rate = e.attempts24h === 0 ? '-' : `${((100 * e.successes24h) / e.attempts24h).toFixed(1)} %`;
  const fields: [string, string][] = [
    ['partner', clientId],
    [
      'status',
      e.status === 'disabled'
        ? `disabled since ${iso(e.disabledAt) ?? '-'} (${e.disabledReason ?? '-'})`
        : 'enabled',
    ],
    ['last success', iso(e.lastSuccessAt) ?? '-'],
    ['last failure', iso(e.lastFailureAt) ?? '-'],
    ['last 24 h', `${e.attempts24h} attempt(s), ${rate} acknowledged`],
  ];
  for (const [k, v] of fields) out(`${k.padEnd(14)}${v}`);
}
