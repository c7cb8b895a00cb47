'use strict';
// A stand-in OTLP/HTTP collector for the benches: accepts `POST /v1/traces`, counts the spans
// (JSON bodies) and throws them away. Started by a bench with `fork`; it says `ready` over IPC,
// and answers a `stats` message with what it has received so far.
const http = require('node:http');

const port = Number(process.argv[2]);
const stats = { requests: 0, bytes: 0, spans: 0, names: {} };

function count(body) {
  try {
    for (const rs of JSON.parse(body).resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const span of ss.spans ?? []) {
          stats.spans += 1;
          stats.names[span.name] = (stats.names[span.name] ?? 0) + 1;
        }
      }
    }
  } catch {
    // A protobuf body: counted in bytes only.
  }
}

http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = Buffer.concat(chunks);
        stats.requests += 1;
        stats.bytes += body.length;
        count(body.toString('utf8'));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else {
        res.writeHead(404).end();
      }
    });
  })
  .listen(port, '127.0.0.1', () => process.send?.('ready'));

process.on('message', (m) => {
  if (m === 'stats') process.send?.({ stats });
});
