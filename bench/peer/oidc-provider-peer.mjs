/**
 * The peer of `npm run bench -- oauth`: the token endpoint of `oidc-provider` 9.13 (the
 * OpenID-certified Node.js authorization server), configured for the job auth-server's
 * `/oauth/token` does, on the same machine and Redis, so the two are measured side by side:
 * - one confidential client per partner, `client_secret_basic`;
 * - opaque access and refresh tokens (the library's default format without resource indicators);
 * - refresh-token rotation on every use (`rotateRefreshToken: true`), reuse of a consumed refresh
 *   token revokes its grant;
 * - storage in Redis through the small adapter below (one hash per model instance, a list per grant
 *   for `revokeByGrantId`), under its own key prefix (the bench gives it a Redis database of its own), so nothing of auth-server's is touched.
 * The peer does no SQL: its records live in Redis alone, which is the storage its documentation
 * shows. Bench-only: nothing under apps/ or libs/ imports it. oidc-provider is ESM-only, hence .mjs.
 *
 * Run: node bench/peer/oidc-provider-peer.mjs <port>   (forked by scripts/bench/oauth.mjs)
 * Environment: REDIS_URL, PEER_KEY_PREFIX, PEER_CLIENTS (JSON [{client_id, client_secret}]).
 * IPC: says `ready` once listening; answers {mint: {client_id, account_id, scope, count}} with
 * {minted: [refresh tokens]}, each a genuine RefreshToken of a saved Grant, made through the
 * provider's own models (what its code flow would have saved).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import Redis from 'ioredis';

const { default: Provider } = await import('oidc-provider');

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableAutoPipelining: false });
const prefix = process.env.PEER_KEY_PREFIX ?? 'oidc-peer:';
const clients = JSON.parse(process.env.PEER_CLIENTS ?? '[]');
const SCOPES = ['offline_access', 'profile:read', 'seatime:read', 'vessels:read'];

/** oidc-provider's storage contract (lib/adapters in its docs), on Redis. */
class RedisAdapter {
  constructor(model) {
    this.model = model;
  }

  key(id) {
    return `${prefix}${this.model}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    const key = this.key(id);
    const multi = redis.multi().del(key).hset(key, 'payload', JSON.stringify(payload));
    if (expiresIn) multi.expire(key, expiresIn);
    if (payload.grantId) {
      const grantKey = `${prefix}grant:${payload.grantId}`;
      multi.rpush(grantKey, key);
      multi.expire(grantKey, 90 * 86400); // the longest life of anything of a grant
    }
    if (payload.uid) multi.set(`${prefix}uid:${payload.uid}`, id, 'EX', expiresIn ?? 3600);
    await multi.exec();
  }

  async find(id) {
    const found = await redis.hgetall(this.key(id));
    if (!found.payload) return undefined;
    const payload = JSON.parse(found.payload);
    return found.consumed ? { ...payload, consumed: Number(found.consumed) } : payload;
  }

  async findByUid(uid) {
    const id = await redis.get(`${prefix}uid:${uid}`);
    return id ? this.find(id) : undefined;
  }

  async findByUserCode() {
    return undefined; // no device flow here
  }

  async consume(id) {
    await redis.hset(this.key(id), 'consumed', Math.floor(Date.now() / 1000));
  }

  async destroy(id) {
    await redis.del(this.key(id));
  }

  async revokeByGrantId(grantId) {
    const grantKey = `${prefix}grant:${grantId}`;
    const keys = await redis.lrange(grantKey, 0, -1);
    await redis.del(...keys, grantKey);
  }
}

const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const provider = new Provider('http://127.0.0.1', {
  adapter: RedisAdapter,
  clients: clients.map((c) => ({
    client_id: c.client_id,
    client_secret: c.client_secret,
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: ['http://localhost:8765/callback'],
    id_token_signed_response_alg: 'ES256', // the one key below is P-256
  })),
  scopes: SCOPES,
  claims: { openid: ['sub'] },
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  rotateRefreshToken: true,
  issueRefreshToken: () => true,
  ttl: { AccessToken: 3600, RefreshToken: 90 * 86400, Grant: 90 * 86400 },
  cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
  jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'peer', use: 'sig', alg: 'ES256' }] },
  features: { devInteractions: { enabled: false } },
  pkce: { required: () => true },
});

/** Refresh tokens the way the code flow leaves them: a saved Grant and a RefreshToken of it. */
async function mint({ client_id, account_id, scope, count }) {
  const client = await provider.Client.find(client_id);
  const minted = [];
  for (let i = 0; i < count; i += 1) {
    const grant = new provider.Grant({ accountId: account_id, clientId: client_id });
    grant.addOIDCScope(scope);
    const grantId = await grant.save();
    const rt = new provider.RefreshToken({
      accountId: account_id,
      client,
      grantId,
      gty: 'authorization_code',
      scope,
      rotations: 0,
      authTime: Math.floor(Date.now() / 1000),
    });
    minted.push(await rt.save());
  }
  return minted;
}

process.on('message', (message) => {
  if (message?.mint) {
    mint(message.mint).then(
      (minted) => process.send?.({ minted }),
      (err) => process.send?.({ error: String(err?.stack ?? err) }),
    );
  }
});

const server = http.createServer(provider.callback());
// The bench's clients keep their connections between rounds, and this server sits idle through ours:
// Node's default (5 s) would close them as a round starts, and a request sent on a connection being
// closed fails with "socket hang up". auth-server's Fastify keeps them 72 s; this server does too.
server.keepAliveTimeout = 72_000;
server.listen(Number(process.argv[2]), '127.0.0.1', () => process.send?.('ready'));
