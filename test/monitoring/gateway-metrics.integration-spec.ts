import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { join } from 'node:path';
import { startGateway, type Gateway } from '../support/nginx';
import { ROOT } from './monitoring';

/**
 * The gateway's metrics, nginx's half of them under real nginx: with GATEWAY_METRICS_SYSLOG it sends
 * one syslog line per request to the exporter's address, in the shape the exporter's configuration
 * (k8s/base/gateway-metrics.hcl) parses, with the area the request was made on even when nginx
 * answers itself (a 502 from an upstream that is down), and without the path or its query.
 */
jest.setTimeout(30_000);

let upstream: http.Server;
let gateway: Gateway;
let syslog: dgram.Socket;
const received: string[] = [];

const HCL = readFileSync(join(ROOT, 'k8s', 'base', 'gateway-metrics.hcl'), 'utf8');

/** The exporter's `format` as a regular expression over the message, one group per variable. */
function exporterFormat(): { variables: string[]; pattern: RegExp } {
  // The namespace's log format (the syslog block has a `format` of its own: rfc3164).
  const format = [...HCL.matchAll(/^\s*format = ("(?:[^"\\]|\\.)*")$/gm)]
    .map((m) => JSON.parse(m[1]) as string)
    .find((f) => f.includes('$'))!;
  const variables = [...format.matchAll(/\$(\w+)/g)].map((m) => m[1]);
  const source = format
    .split(/\$\w+/)
    .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('([^"\\s]+(?: [^"\\s]+)*?)');
  return { variables, pattern: new RegExp(`^${source}$`) };
}

/** What the exporter reads of a line: the variables of its format, by name. */
function parsed(line: string): Record<string, string> {
  // RFC 3164 as nginx sends it with nohostname: <PRI>Mmm dd hh:mm:ss tag: message
  const message = /^<\d+>\w{3} [ \d]\d \d\d:\d\d:\d\d (\S+): (.*)$/.exec(line);
  if (!message) throw new Error(`not an RFC 3164 line: ${line}`);
  const tag = /tags = \["(\w+)"\]/.exec(HCL)![1];
  expect(message[1]).toBe(tag);
  const { variables, pattern } = exporterFormat();
  const values = pattern.exec(message[2]);
  if (!values) throw new Error(`the exporter's format does not parse: ${message[2]}`);
  return Object.fromEntries(variables.map((v, i) => [v, values[i + 1]]));
}

beforeAll(async () => {
  syslog = dgram.createSocket('udp4');
  syslog.on('message', (msg) => received.push(msg.toString('utf8')));
  await new Promise<void>((resolve) => syslog.bind(0, '127.0.0.1', resolve));
  const exporter = `127.0.0.1:${syslog.address().port}`;

  upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const up = `127.0.0.1:${(upstream.address() as net.AddressInfo).port}`;
  // A port nobody listens on: nginx answers 502 itself.
  const down = await new Promise<string>((resolve) => {
    const probe = http.createServer().listen(0, '127.0.0.1', () => {
      const port = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(`127.0.0.1:${port}`));
    });
  });

  gateway = await startGateway({
    APP_ENV: 'sandbox',
    PUBLIC_BASE_URL: 'https://api.example.test',
    GATEWAY_WORKER_PROCESSES: '1',
    AUTH_SERVER_UPSTREAMS: up,
    CONSENT_UI_UPSTREAMS: up,
    CREW_API_UPSTREAMS: down,
    SPONSORSHIP_API_UPSTREAMS: up,
    WEBHOOK_DISPATCHER_UPSTREAMS: up,
    GATEWAY_UPSTREAM_CONNECT_TIMEOUT: '1s',
    GATEWAY_METRICS_SYSLOG: exporter,
  });
});

afterAll(async () => {
  await gateway?.stop();
  upstream?.closeAllConnections();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
  syslog?.close();
});

async function linesAfter(requests: () => Promise<void>, count: number): Promise<string[]> {
  const from = received.length;
  await requests();
  for (let i = 0; i < 50 && received.length < from + count; i++)
    await new Promise((resolve) => setTimeout(resolve, 100));
  return received.slice(from);
}

describe('the gateway’s per-request lines for its metrics exporter', () => {
  it('sends one line per request, with method, area and status, that the exporter’s format parses', async () => {
    const lines = await linesAfter(async () => {
      expect((await fetch(`${gateway.base}/v1/me?email=alex.morgan%40sandbox.test`)).status).toBe(502);
      const token = await fetch(`${gateway.base}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
      expect(token.status).toBe(200);
      expect((await fetch(`${gateway.base}/no-such-page`)).status).toBe(404);
    }, 3);
    expect(lines).toHaveLength(3);
    const values = lines.map(parsed);
    expect(values.map((v) => [v.request, v.status])).toEqual([
      // nginx's own 502 counts on the area the partner called, not on its error page's location.
      ['GET v1', '502'],
      ['POST oauth', '200'],
      ['GET other', '404'],
    ]);
    for (const v of values) expect(Number(v.request_time)).toBeGreaterThanOrEqual(0);
    // No path, no query, no address leaves for the exporter.
    expect(lines.join('\n')).not.toMatch(/sandbox\.test|\/v1\/me|127\.0\.0\.1/);
  });

  it('still writes the JSON access line of every request to stdout', async () => {
    const before = gateway.accessLog().trim().split('\n').length;
    await fetch(`${gateway.base}/v1/me`);
    // nginx writes the line after it answered: a loaded machine may read the log a moment early.
    let lines = gateway.accessLog().trim().split('\n');
    for (let i = 0; i < 50 && lines.length <= before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      lines = gateway.accessLog().trim().split('\n');
    }
    expect(JSON.parse(lines.at(-1)!)).toEqual(expect.objectContaining({ path: '/v1/me', status: 502 }));
  });
});
