import http from 'node:http';
import { assertContract } from './contract';
import { eventually as poll } from './services';

/** A response as the e2e tests look at it. Header names are lower-case. */
export interface HttpResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  /** Milliseconds from sending to the end of the response. */
  readonly elapsedMs: number;
  json<T = Record<string, unknown>>(): T;
  header(name: string): string | undefined;
}

export interface RequestOptions {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  readonly timeoutMs?: number;
}

/**
 * One HTTP request with node:http rather than fetch: a server may answer before it has read
 * the whole body (a 413 for an oversized upload) and close the connection; the answer is
 * what counts, not the error of the unfinished upload.
 */
export function request(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
  const { method = 'GET', headers = {}, body, timeoutMs = 20_000 } = options;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(
      url,
      {
        method,
        headers:
          body === undefined ? headers : { 'content-length': String(Buffer.byteLength(body)), ...headers },
        timeout: timeoutMs,
        agent: false,
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          // Every answer a test receives must match the OpenAPI description (test/support/contract.ts).
          try {
            assertContract(method, url, { status: res.statusCode ?? 0, headers: res.headers, text });
          } catch (violation) {
            reject(violation as Error);
            return;
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            elapsedMs: Date.now() - started,
            json: <T>() => JSON.parse(text) as T,
            header: (name: string) => {
              const v = res.headers[name.toLowerCase()];
              return Array.isArray(v) ? v.join(', ') : v;
            },
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms: ${method} ${url}`)));
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    if (body === undefined) req.end();
    else req.end(body);
  });
}

/** `eventually` of services.ts with the e2e tier's patience (through the gateway, processes on a busy machine). */
export const eventually = <T>(check: () => Promise<T | undefined>, timeoutMs = 15_000, everyMs = 250) =>
  poll(check, timeoutMs, everyMs);
