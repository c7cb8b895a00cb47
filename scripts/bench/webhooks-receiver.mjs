// The partner's endpoint of `npm run bench -- webhooks`, in a process of its own: answers 204 at
// once and notes, per request, the event id and how long after the record write (the event's
// created_at) it arrived. With a second argument `hang` it is the noisy neighbour's endpoint
// instead: it reads each request and never answers (the dispatcher's budget ends the attempt), and
// counts the requests it holds open. The bench asks it over IPC:
//   { cmd: 'reset' }            forget everything
//   { cmd: 'stats', want: ids } → { requests, unique, missing, first_ms, last_ms, p50_ms, p99_ms }
import http from 'node:http';

const port = Number(process.argv[2]);
const hang = process.argv[3] === 'hang';
let open = 0;
let maxOpen = 0;
let latencies = [];
let seen = new Map(); // event id → receipt time (first)
let requests = 0;
let first = 0;
let last = 0;

const server = http.createServer((req, res) => {
  if (hang) {
    requests += 1;
    open += 1;
    maxOpen = Math.max(maxOpen, open);
    req.socket.once('close', () => (open -= 1));
    req.resume();
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    res.writeHead(204).end();
    requests += 1;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (!seen.has(body.id)) {
        seen.set(body.id, now);
        latencies.push(now - Date.parse(body.created_at));
      }
    } catch {
      // Not a webhook: counted as a request, nothing more.
    }
    if (first === 0) first = now;
    last = now;
  });
});
server.keepAliveTimeout = 30_000;

function pct(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

process.on('message', (msg) => {
  if (msg.cmd === 'reset') {
    latencies = [];
    seen = new Map();
    requests = 0;
    maxOpen = open;
    first = 0;
    last = 0;
    process.send({ ok: true });
  } else if (msg.cmd === 'stats') {
    const want = msg.want ?? [];
    const sorted = [...latencies].sort((a, b) => a - b);
    process.send({
      requests,
      unique: seen.size,
      missing: want.filter((id) => !seen.has(id)).length,
      first_ms: first,
      last_ms: last,
      p50_ms: pct(sorted, 0.5),
      p99_ms: pct(sorted, 0.99),
      open,
      max_open: maxOpen,
    });
  }
});

server.listen(port, '127.0.0.1', () => process.send({ ready: true }));
