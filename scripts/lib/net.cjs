'use strict';
// Small network helpers on node builtins only: TCP probes, free ports, HTTP polling,
// and a minimal Redis (RESP) client for PING / key clean-up without loading ioredis.
const net = require('node:net');
const http = require('node:http');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** True when something accepts a TCP connection on host:port within timeoutMs. */
function tcpReachable(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port) });
    const done = (ok) => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Polls until host:port accepts connections; throws after timeoutMs. */
async function waitForPort(host, port, timeoutMs, what = `${host}:${port}`) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await tcpReachable(host, port, 1000)) return;
    await sleep(250);
  }
  throw new Error(`${what} did not open within ${Math.round(timeoutMs / 1000)} s`);
}

/** A TCP port that was free a moment ago on 127.0.0.1 (the kernel picks it). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Several distinct free ports. */
async function freePorts(count) {
  const ports = new Set();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** One HTTP request with a timeout; resolves { status, headers, body } or rejects. */
function httpRequest(url, { method = 'GET', headers = {}, body, timeoutMs = 5000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, timeout: timeoutMs, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms: ${method} ${url}`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/**
 * Polls url until it answers 200. `isAlive` (optional) is checked between attempts so a
 * process that died is reported at once instead of after the whole timeout.
 */
async function waitForHttpOk(url, { timeoutMs = 60000, isAlive, what = url } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (isAlive && !isAlive()) throw new Error(`${what} exited before ${url} answered 200`);
    try {
      const res = await httpRequest(url, { timeoutMs: 2000 });
      if (res.status === 200) return res;
      last = `HTTP ${res.status} ${res.body.slice(0, 300)}`;
    } catch (err) {
      last = err.message;
    }
    await sleep(300);
  }
  throw new Error(`${what}: ${url} not ready within ${Math.round(timeoutMs / 1000)} s (last: ${last})`);
}

// ---- minimal Redis client ---------------------------------------------------------------

function encodeCommand(args) {
  let out = `*${args.length}\r\n`;
  for (const a of args) {
    const s = String(a);
    out += `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
  }
  return out;
}

/** Parses one RESP value from buf at offset; returns [value, nextOffset] or undefined if incomplete. */
function parseResp(buf, offset = 0) {
  const lineEnd = buf.indexOf('\r\n', offset);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buf[offset]);
  const line = buf.toString('utf8', offset + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return [line, next];
    case '-':
      return [new Error(line), next];
    case ':':
      return [Number(line), next];
    case '$': {
      const len = Number(line);
      if (len < 0) return [null, next];
      if (buf.length < next + len + 2) return undefined;
      return [buf.toString('utf8', next, next + len), next + len + 2];
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return [null, next];
      const items = [];
      let pos = next;
      for (let i = 0; i < count; i++) {
        const r = parseResp(buf, pos);
        if (!r) return undefined;
        items.push(r[0]);
        pos = r[1];
      }
      return [items, pos];
    }
    default:
      return [new Error(`unexpected RESP type ${type}`), buf.length];
  }
}

/**
 * Runs commands in order on one connection to redisUrl (redis://[user:pass@]host:port[/db])
 * and resolves the list of replies (an error reply rejects).
 */
function redisCommands(redisUrl, commands, timeoutMs = 3000) {
  const u = new URL(redisUrl);
  const pre = [];
  if (u.password)
    pre.push(
      u.username
        ? ['AUTH', decodeURIComponent(u.username), decodeURIComponent(u.password)]
        : ['AUTH', decodeURIComponent(u.password)],
    );
  const db = u.pathname.replace(/^\//, '');
  if (db) pre.push(['SELECT', db]);
  const all = [...pre, ...commands];
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: u.hostname || '127.0.0.1', port: Number(u.port || 6379) });
    let buf = Buffer.alloc(0);
    const replies = [];
    const fail = (err) => {
      socket.destroy();
      reject(err);
    };
    socket.setTimeout(timeoutMs, () => fail(new Error(`redis ${u.host}: timeout`)));
    socket.once('error', fail);
    socket.once('close', () => {
      if (replies.length < all.length) reject(new Error(`redis ${u.host}: connection closed`));
    });
    socket.once('connect', () => socket.write(all.map(encodeCommand).join('')));
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const r = parseResp(buf);
        if (!r) break;
        buf = buf.subarray(r[1]);
        if (r[0] instanceof Error) return fail(new Error(`redis: ${r[0].message}`));
        replies.push(r[0]);
        if (replies.length === all.length) {
          socket.end();
          return resolve(replies.slice(pre.length));
        }
      }
    });
  });
}

module.exports = {
  sleep,
  tcpReachable,
  waitForPort,
  freePort,
  freePorts,
  httpRequest,
  waitForHttpOk,
  redisCommands,
};
