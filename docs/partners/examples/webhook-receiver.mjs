// A webhook receiver in Node 20+ (no dependencies): verify the signature over the raw body,
// reject stale timestamps, dedupe on the event id, answer 2xx at once and work afterwards.
//   WEBHOOK_SECRET=whsec_sandbox_secret node webhook-receiver.mjs   (listens on 127.0.0.1:8765)
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

const REPLAY_WINDOW_SECONDS = 5 * 60;

/**
 * True when `X-SVC-Signature` (`t=<ts>,v1=<hex>[,v1=<hex>…]`) holds an HMAC-SHA256 of
 * "<ts>.<raw body>" under `secret`, and <ts> is within the replay window. While the service
 * rotates your secret the header carries one v1 per valid secret: any match is enough.
 */
export function verifyWebhook(rawBody, signatureHeader, secret, nowSeconds = Date.now() / 1000) {
  let timestamp;
  const signatures = [];
  for (const part of String(signatureHeader ?? '').split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') timestamp = value;
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (!timestamp || !/^\d+$/.test(timestamp) || signatures.length === 0) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > REPLAY_WINDOW_SECONDS) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
  return signatures.some((signature) => timingSafeEqual(signature, expected));
}

/** Event ids already handled; use a unique key in your database in production. */
const seen = new Set();

export function startReceiver(secret, port = 8765) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks); // verify these exact bytes, before any JSON parsing
      if (!verifyWebhook(rawBody, req.headers['x-svc-signature'], secret)) {
        return void res.writeHead(400).end('bad signature');
      }
      const event = JSON.parse(rawBody.toString('utf8'));
      res.writeHead(204).end(); // acknowledge within 5 seconds; do the work afterwards
      if (seen.has(event.id)) return; // at-least-once delivery: a retry repeats the same id
      seen.add(event.id);
      handle(event);
    });
  });
  return server.listen(port, '127.0.0.1');
}

function handle(event) {
  switch (event.type) {
    case 'user.profile.updated': // GET /v1/me
    case 'user.sea_time.updated': // GET /v1/me/sea-time (and /recent)
    case 'user.vessels.updated': // GET /v1/me/vessels from the first page
      console.log(`refetch for ${event.user_id}: ${event.type}`);
      break;
    case 'user.consent.revoked': // delete cached data of the member within 30 days
      console.log(`forget ${event.user_id}`);
      break;
    default: // webhook.test, and event types added later: acknowledge and log
      console.log(`event ${event.type} ${event.id}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  startReceiver(process.env.WEBHOOK_SECRET ?? 'whsec_sandbox_secret');
}
