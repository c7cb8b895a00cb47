'use strict';
// Closed-loop load: `concurrency` keep-alive clients each send GET requests back to back for
// `seconds`; prints {requests, errors, rps, p50_ms, p99_ms} as JSON.
const http = require('node:http');

const [url, seconds = '5', concurrency = '32'] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(concurrency) });
const target = new URL(url);
const latencies = [];
let errors = 0;

function once() {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const req = http.get(
      { host: target.hostname, port: target.port, path: target.pathname, agent },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) errors += 1;
          latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
          resolve();
        });
      },
    );
    req.on('error', () => {
      errors += 1;
      resolve();
    });
  });
}

async function client(deadline) {
  while (Date.now() < deadline) await once();
}

(async () => {
  const deadline = Date.now() + Number(seconds) * 1000;
  const started = Date.now();
  await Promise.all(Array.from({ length: Number(concurrency) }, () => client(deadline)));
  const elapsed = (Date.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] || 0;
  process.stdout.write(
    JSON.stringify({
      requests: latencies.length,
      errors,
      rps: Math.round(latencies.length / elapsed),
      p50_ms: Number(pct(0.5).toFixed(2)),
      p99_ms: Number(pct(0.99).toFixed(2)),
    }),
  );
  agent.destroy();
})();
