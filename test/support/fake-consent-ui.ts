import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { RpcContract } from '@svc/contracts';
import {
  createHttpApp,
  createLogger,
  loadConfig,
  PlatformModule,
  RouteIndex,
  RpcClient,
} from '@svc/platform';
import { CONSENT_UI_CONFIG } from '../../apps/consent-ui/src/config';
import { ConsentUiFeaturesModule } from '../../apps/consent-ui/src/consent-ui.module';
import { mapConsentUiError } from '../../apps/consent-ui/src/errors';
import type { SessionTable, StoredSession } from '../../apps/consent-ui/src/sessions/session.entity';
import { SessionsRepository } from '../../apps/consent-ui/src/sessions/sessions.repository';
import { SessionsService } from '../../apps/consent-ui/src/sessions/sessions.service';
import { renderConsentUiError } from '../../apps/consent-ui/src/views/error-page.view';

export interface TestApp {
  readonly app: NestFastifyApplication;
  readonly rpc: FakeRpcClient;
  readonly sessions: FakeSessionsRepository;
  /** A signed-in member: the Cookie header to send and the session's CSRF token. */
  signIn(userId?: string): Promise<{ cookie: string; csrf: string }>;
  close(): Promise<void>;
}

/**
 * consent-ui's real pages on the platform's real HTTP stack (form parser, error filter, HTML
 * error renderer), in memory, with a fake auth-server and a fake session store; requests go
 * through Fastify's `inject`, no socket, no database, no broker.
 */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const rpc = new FakeRpcClient();
  const sessions = new FakeSessionsRepository();
  const config = loadConfig(CONSENT_UI_CONFIG, {
    APP_ENV: 'sandbox',
    PORT: '1',
    METRICS_PORT: '0',
    DATABASE_URL: 'postgres://unused@localhost:1/unused',
    AMQP_URL: 'amqp://unused@localhost:1/',
    REDIS_URL: 'redis://unused@localhost:1',
    ...env,
  });
  const logger = createLogger('consent-ui', 'silent');
  const routes = new RouteIndex();

  @Global()
  @Module({
    providers: [
      { provide: RpcClient, useValue: rpc.asRpcClient() },
      { provide: SessionsRepository, useValue: sessions.asRepository() },
    ],
    exports: [RpcClient, SessionsRepository],
  })
  class FakeCollaboratorsModule {}

  const root: DynamicModule = {
    module: class ConsentUiTestRoot {},
    imports: [
      PlatformModule.forRoot({ app: 'consent-ui', config, logger, routes }),
      FakeCollaboratorsModule,
      ConsentUiFeaturesModule,
    ],
  };
  const app = await createHttpApp(root, {
    app: 'consent-ui',
    logger,
    routes,
    config,
    formBodies: true,
    mapDomainError: mapConsentUiError,
    renderError: renderConsentUiError,
  });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return {
    app,
    rpc,
    sessions,
    async signIn(userId = 'usr_test') {
      const { session, cookies } = await app.get(SessionsService).start(userId, undefined);
      return { cookie: cookieHeader(cookies), csrf: session.csrfToken };
    },
    close: () => app.close(),
  };
}

/** The Cookie header a browser sends back after these Set-Cookie values (cleared ones dropped). */
export function cookieHeader(setCookies: readonly string[] | string | undefined): string {
  const list = setCookies === undefined ? [] : Array.isArray(setCookies) ? setCookies : [setCookies];
  return (list as readonly string[])
    .map((c) => c.split(';')[0])
    .filter((pair) => !pair.endsWith('='))
    .join('; ');
}

/** The Set-Cookie values of a response, always as a list. */
export function setCookies(response: { headers: Record<string, unknown> }): string[] {
  const value = response.headers['set-cookie'];
  if (value === undefined) return [];
  return Array.isArray(value) ? (value as string[]) : [String(value)];
}

/** The value of a hidden form field of a page. */
export function hiddenField(body: string, name: string): string | undefined {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const value = new RegExp(`name="${escaped}" value="([^"]*)"`).exec(body)?.[1];
  return value
    ?.replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export function form(fields: Record<string, string>): { payload: string; headers: Record<string, string> } {
  return {
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  };
}

/**
 * Collaborators for unit specs. The fake RPC client runs the contract's validators on both
 * sides, as the real transport and auth-server would, so a spec cannot pass with a payload
 * auth-server would refuse.
 */
export class FakeRpcClient {
  readonly calls: { pattern: string; payload: unknown }[] = [];
  private readonly handlers = new Map<string, (payload: unknown) => unknown>();

  on<Req, Res>(contract: RpcContract<Req, Res>, handler: (payload: Req) => Res | Promise<Res>): this {
    this.handlers.set(contract.pattern, (payload) => handler(payload as Req));
    return this;
  }

  /** The next calls of `contract` fail with `error` (e.g. DependencyUnavailableError). */
  failWith<Req, Res>(contract: RpcContract<Req, Res>, error: unknown): this {
    this.handlers.set(contract.pattern, () => Promise.reject(error));
    return this;
  }

  async call<Req, Res>(contract: RpcContract<Req, Res>, payload: Req): Promise<Res> {
    this.calls.push({ pattern: contract.pattern, payload });
    const handler = this.handlers.get(contract.pattern);
    if (!handler) throw new Error(`FakeRpcClient: no answer for ${contract.pattern}`);
    const request = contract.parseRequest(JSON.parse(JSON.stringify(payload)));
    return contract.parseResponse(JSON.parse(JSON.stringify(await handler(request))));
  }

  callsOf(contract: RpcContract<unknown, unknown>): unknown[] {
    return this.calls.filter((c) => c.pattern === contract.pattern).map((c) => c.payload);
  }

  /** The fake in the place of the real client (it has the one method the features use). */
  asRpcClient(): RpcClient {
    return this as unknown as RpcClient;
  }
}

/** In-memory session tables with the repository's semantics (`rows`: every kind's, by digest). */
export class FakeSessionsRepository {
  readonly rows = new Map<string, StoredSession>();
  private readonly tables = new Map<string, string>();

  insert(kind: SessionTable, session: StoredSession): Promise<void> {
    if (this.rows.has(session.idDigest)) return Promise.reject(new Error('duplicate key'));
    this.rows.set(session.idDigest, session);
    this.tables.set(session.idDigest, kind.table);
    return Promise.resolve();
  }

  findLive(kind: SessionTable, idDigest: string, now: Date): Promise<StoredSession | undefined> {
    const row = this.of(kind, idDigest);
    return Promise.resolve(row && row.expiresAt.getTime() > now.getTime() ? row : undefined);
  }

  touch(kind: SessionTable, idDigest: string, now: Date): Promise<void> {
    const row = this.of(kind, idDigest);
    if (row) this.rows.set(idDigest, { ...row, lastSeenAt: now });
    return Promise.resolve();
  }

  delete(kind: SessionTable, idDigest: string): Promise<void> {
    if (this.of(kind, idDigest)) this.rows.delete(idDigest);
    return Promise.resolve();
  }

  deleteExpired(kind: SessionTable, now: Date, limit: number): Promise<number> {
    const expired = [...this.rows.values()]
      .filter((r) => this.tables.get(r.idDigest) === kind.table && r.expiresAt.getTime() <= now.getTime())
      .slice(0, limit);
    for (const r of expired) this.rows.delete(r.idDigest);
    return Promise.resolve(expired.length);
  }

  asRepository(): SessionsRepository {
    return this as unknown as SessionsRepository;
  }

  private of(kind: SessionTable, idDigest: string): StoredSession | undefined {
    return this.tables.get(idDigest) === kind.table ? this.rows.get(idDigest) : undefined;
  }
}

/** A clock the spec moves by hand. */
export class FakeClock {
  constructor(private now = new Date('2026-03-01T09:00:00.000Z')) {}
  readonly read = (): Date => new Date(this.now.getTime());
  advance(ms: number): void {
    this.now = new Date(this.now.getTime() + ms);
  }
}
