import {
  CREW_EVENTS_EXCHANGE,
  EVENT_BATCH_CONTENT_TYPE,
  type EventBatch,
  type EventType,
  type NestAppName,
  type ServiceEvent,
} from '@svc/contracts';
import { AmqpConnection } from '@svc/platform';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { WEBHOOK_DISPATCHER } from '../../../apps/webhook-dispatcher/src/app.definition';
import { startAuthServer, type AuthServerHarness } from './auth-server';
import { WebhookReceiver } from '../webhook-receiver';
import { bootApp, spawnApp, startStack, testAppEnv, useStarted, type Keep } from './app-process';
import { createSuiteVhost } from '../../../scripts/lib/isolation.cjs';
import { testServices } from '../services';
import { AppConnections } from '../broker-users';
import { publisherOf } from '../../../scripts/lib/credentials.cjs';

/**
 * What most delivery specs start: auth-server, one dispatcher and a partner's receiving endpoint.
 * `ownVhost`: runs the stack on a vhost of its own (named after this label) instead of the run's,
 * so that the dispatcher works off this file's events alone. A file that counts what the
 * dispatcher did (its metrics, the endpoints it disabled) needs it: on the shared vhost, retries
 * that earlier files' failing endpoints left in the queues reach whichever dispatcher runs next.
 * The first attempts earlier files left in the backlog (their rows, in the database a Jest
 * worker's files share) are given up first, for the same reason.
 */
function deliveryStack(env: Readonly<Record<string, string>>, options: { readonly ownVhost?: string }) {
  return async (keep: Keep) => {
    let brokerEnv: Record<string, string> = {};
    if (options.ownVhost) {
      const vhost = await createSuiteVhost(testServices().amqpUrl, options.ownVhost);
      keep({ close: () => vhost.remove() });
      brokerEnv = { AMQP_URL: vhost.url };
      const db = new Pool({ connectionString: testServices().databaseUrl, max: 1 });
      await db
        .query(
          `UPDATE webhooks.deliveries SET status = 'failed', give_up_reason = 'attempts_exhausted'
            WHERE status = 'pending' AND attempts = 0`,
        )
        .finally(() => db.end());
    }
    const auth = keep(await startAuthServer(brokerEnv));
    const dispatcher = keep(await startDispatcher(auth, { ...brokerEnv, ...env }));
    return { auth, dispatcher, receiver: keep(await WebhookReceiver.start()) };
  };
}

export function startDeliveryStack(
  env: Readonly<Record<string, string>> = {},
  options: { ownVhost?: string } = {},
) {
  return startStack(deliveryStack(env, options));
}

export type DeliveryStack = Awaited<ReturnType<typeof startDeliveryStack>>;

/** The delivery stack for the specs of one file (useStarted). */
export function useDeliveryStack(
  env: Readonly<Record<string, string>> = {},
  options: { ownVhost?: string } = {},
) {
  return useStarted(deliveryStack(env, options));
}

/**
 * webhook-dispatcher booted in-process (bootApp), next to an in-process auth-server, with a
 * publisher on crew.events beside it. `rpc`: also answer the dispatcher's RPC queue (the partner
 * portal), as `serveApp` does.
 */
export async function startDispatcher(
  auth: AuthServerHarness,
  env: Readonly<Record<string, string>> = {},
  options: { readonly rpc?: boolean } = {},
) {
  const booted = await bootApp(
    WEBHOOK_DISPATCHER,
    testAppEnv('webhook-dispatcher', auth.services, env),
    options.rpc,
  );
  // Connected means the topology (queues and the crew.events binding) is declared.
  await booted.app.get(AmqpConnection).waitUntilConnected(15_000);
  const publisher = await startPublisher(auth, env.AMQP_URL);
  return {
    ...publisher,
    app: booted.app,
    async close() {
      await booted.close();
      await publisher.close();
    },
  };
}

export type DispatcherHarness = Awaited<ReturnType<typeof startDispatcher>>;

/**
 * What a test needs beside a dispatcher: crew.events to publish to, as the outbox relays publish on
 * it, and the database to look at; it consumes nothing. Each routing key is published as the app
 * that really publishes it (auth-server `user.consent.revoked`, crew-api the others), on that app's
 * broker user, whose topic permission allows its own event types only (the dispatcher's may not write).
 */
export async function startPublisher(auth: AuthServerHarness, amqpUrl = auth.services.amqpUrl) {
  const relays = new AppConnections(amqpUrl, 'webhooks-test-relay');
  const db = new Pool({ connectionString: auth.services.databaseUrl, max: 4 });
  /** A pack of events, as the relays publish every webhook event (each entry's message id = its payload's id). */
  const publishPacked = async (routingKey: string, payloads: readonly { id: string }[]) => {
    const relay = relays.of(publisherOf(CREW_EVENTS_EXCHANGE, routingKey) as NestAppName);
    await relay.waitUntilConnected(15_000);
    const batch: EventBatch = { events: payloads.map((payload) => ({ message_id: payload.id, payload })) };
    await relay.publish(CREW_EVENTS_EXCHANGE, routingKey, Buffer.from(JSON.stringify(batch)), {
      messageId: `batch:${payloads[0].id}`,
      contentType: EVENT_BATCH_CONTENT_TYPE,
    });
  };
  return {
    db,
    /** An event in a pack of its own. */
    publish: (event: ServiceEvent) => publishPacked(event.type, [event]),
    publishPacked,
    async close() {
      await relays.close();
      await db.end();
    },
  };
}

export type EventPublisher = Awaited<ReturnType<typeof startPublisher>>;

export function newEvent(type: EventType, userId: string, clientId?: string): ServiceEvent {
  return {
    id: `evt_${randomBytes(12).toString('base64url')}`,
    type,
    user_id: userId,
    created_at: new Date().toISOString(),
    ...(clientId === undefined ? {} : { client_id: clientId }),
  };
}

export async function deliveriesOf(db: Pool, eventId: string) {
  const { rows } = await db.query<{
    delivery_id: string;
    event_id: string;
    client_id: string;
    target_url: string;
    body: string;
    status: string;
    attempts: number;
  }>(
    `SELECT delivery_id, event_id, client_id, target_url, body, status, attempts
       FROM webhooks.deliveries WHERE event_id = $1 ORDER BY client_id`,
    [eventId],
  );
  return rows;
}

export async function attemptsOf(db: Pool, deliveryId: string) {
  const { rows } = await db.query<{
    attempt: number;
    status_code: number | null;
    error: string | null;
    next_attempt_at: Date | null;
    duration_ms: number;
  }>(
    `SELECT attempt, status_code, error, next_attempt_at, duration_ms
       FROM webhooks.delivery_attempts WHERE delivery_id = $1 ORDER BY attempt`,
    [deliveryId],
  );
  return rows;
}

/**
 * webhook-dispatcher as the built process, for what only a real process shows: being killed with
 * SIGKILL mid-delivery, or losing its broker.
 */
export function spawnDispatcher(
  auth: AuthServerHarness,
  label: string,
  env: Readonly<Record<string, string>> = {},
) {
  return spawnApp(
    'webhook-dispatcher',
    label,
    testAppEnv('webhook-dispatcher', auth.services, { LOG_LEVEL: 'info', ...env }),
  );
}
