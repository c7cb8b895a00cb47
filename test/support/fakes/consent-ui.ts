import type { RpcContract } from '@svc/contracts';
import type { RpcClient } from '@svc/platform';
import type { SessionTable, StoredSession } from '../../../apps/consent-ui/src/sessions/session.entity';
import type { SessionsRepository } from '../../../apps/consent-ui/src/sessions/sessions.repository';

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
