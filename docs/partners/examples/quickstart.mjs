// The sandbox quickstart in Node 20+ (no dependencies): PKCE, the authorization request, the
// callback, the code exchange, a crew-data call, a conditional request, a refresh, a revocation.
//   node quickstart.mjs            then open the printed URL and sign in as a sandbox crew member
// BASE_URL (default @@PUBLIC_BASE_URL@@) is the service; the callback listens on localhost:8765,
// the redirect URI registered for sandbox-partner.
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

const BASE_URL = process.env.BASE_URL ?? '@@PUBLIC_BASE_URL@@';
const CLIENT_ID = 'sandbox-partner';
const CLIENT_SECRET = 'sandbox-secret';
const REDIRECT_URI = 'http://localhost:8765/callback';

// 1. A fresh PKCE pair and state for every authorization request (RFC 7636).
const verifier = randomBytes(48).toString('base64url'); // 64 characters
const challenge = createHash('sha256').update(verifier).digest('base64url');
const state = randomBytes(16).toString('hex');

// 2. Where to send the crew member's browser.
const authorize = new URL('/oauth/authorize', BASE_URL);
authorize.search = new URLSearchParams({
  response_type: 'code',
  client_id: CLIENT_ID,
  redirect_uri: REDIRECT_URI,
  scope: 'profile:read seatime:read vessels:read',
  state,
  code_challenge: challenge,
  code_challenge_method: 'S256',
}).toString();
console.log(`Open this URL, sign in and press Allow:\n\n  ${authorize}\n`);

// 3. The browser comes back to the redirect URI with code, state and iss (or an error).
const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', REDIRECT_URI);
  if (url.pathname !== '/callback') return void res.writeHead(404).end();
  const params = url.searchParams;
  if (params.get('state') !== state) return void res.writeHead(400).end('state mismatch: not your request');
  if (params.get('iss') !== BASE_URL.replace(/\/+$/, ''))
    return void res.writeHead(400).end('unexpected issuer');
  if (params.get('error')) {
    res.writeHead(200).end(`Not connected: ${params.get('error')}`);
    return server.close();
  }
  res.writeHead(200, { 'content-type': 'text/plain' }).end('Connected. You can close this tab.');
  server.close();
  try {
    await afterConsent(params.get('code'));
  } catch (err) {
    console.error(err);
    process.exitCode = 1;
  }
});
server.listen(8765, 'localhost');

async function afterConsent(code) {
  // 4. Exchange the code within 60 seconds (single use), proving possession of the verifier.
  const tokens = await post('/oauth/token', {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  });
  console.log('granted scopes:', tokens.scope);

  // 5. Read the record with the access token (1 hour).
  const me = await fetch(new URL('/v1/me', BASE_URL), {
    headers: { authorization: `Bearer ${tokens.access_token}` },
  });
  console.log(me.status, await me.json());
  console.log('rate limit left:', me.headers.get('x-ratelimit-remaining'));

  // 6. Ask again with the ETag: 304 without a body while nothing changed.
  const again = await fetch(new URL('/v1/me', BASE_URL), {
    headers: { authorization: `Bearer ${tokens.access_token}`, 'if-none-match': me.headers.get('etag') },
  });
  console.log('conditional request:', again.status);

  // 7. Refresh: the old pair is revoked, keep the new one (the refresh token rotates).
  const refreshed = await post('/oauth/token', {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  });

  // 8. Revoke when the member disconnects on your side: both tokens of the pair stop working.
  await post('/oauth/revoke', {
    token: refreshed.refresh_token,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  });
  console.log('revoked');
}

async function post(path, form) {
  const res = await fetch(new URL(path, BASE_URL), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : {};
}
