import { setTimeout as sleep } from 'node:timers/promises';
import { request, type HttpResponse } from '../support/http';
import { startSystem, type RunningSystem } from '../support/system';
import { WebhookReceiver } from '../support/webhook-receiver';
import { json, type RegisteredPartner, registerPartner } from '../support/e2e-client';

/**
 * No partner takes the portal away from another (issue 46): one RPC consumer per dispatcher
 * (prefetch 20) answers every partner's portal, and a test event waits for the partner's endpoint
 * (5 s) inside it. While partner A's endpoint hangs and A spends its whole minute budget on portal
 * pages, portal test events and API calls (enabling included), partner B's portal pages answer in
 * under 1 s (p99). Every app a process, two of each, behind the gateway, default limits.
 */
jest.setTimeout(300_000);

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const PER_MINUTE = 600;

let system: RunningSystem;
let receiver: WebhookReceiver;
const answers = new Map<string, number | 'hang'>();
const url = (p: string) => `${system.baseUrl}${p}`;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  system = await startSystem({ label: 'portal-neighbours' });
}, 240_000);

afterAll(async () => {
  await system?.stop();
  await receiver?.close();
}, 120_000);

/** A portal session as a browser holds it: its cookie and its forms' CSRF token. */
async function openPortal(p: RegisteredPartner): Promise<{ cookie: string; csrf: string }> {
  const link = await json(url('/v1/partners/portal/sessions'), 'POST', p.basic);
  expect(link.status).toBe(201);
  const { pathname, search } = new URL(link.json<{ url: string }>().url);
  const page = await request(url(`${pathname}${search}`), { timeoutMs: 30_000 });
  const token = /name="token" value="([^"]+)"/.exec(page.text)![1];
  const opened = await request(url('/portal/open'), {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ token }).toString(),
    timeoutMs: 30_000,
  });
  expect(opened.status).toBe(303);
  const cookie = ([] as string[]).concat(opened.headers['set-cookie'] ?? [])[0].split(';')[0];
  const overview = await request(url('/portal'), { headers: { cookie }, timeoutMs: 30_000 });
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(overview.text)![1] };
}

function p99(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length * 0.99) - 1];
}

describe('no partner takes the portal away from another', () => {
  it('B’s portal pages answer in under 1 s (p99) while A’s endpoint hangs and A spends its whole budget', async () => {
    const a = await registerPartner({ system, receiver, answers }, 'e2e-neighbour-a', 'Neighbour A');
    const b = await registerPartner({ system, receiver, answers }, 'e2e-neighbour-b', 'Neighbour B');
    answers.set(a.hook, 'hang');
    const portalA = await openPortal(a);
    const portalB = await openPortal(b);

    // A: 700 requests, one every 25 ms without waiting for the answers (the hanging ones pile up):
    // half are portal test events, the rest portal pages, API reads and API enables.
    const statuses = { test: new Map<number, number>(), other: new Map<number, number>() };
    const count = (kind: 'test' | 'other', res: HttpResponse): void => {
      statuses[kind].set(res.status, (statuses[kind].get(res.status) ?? 0) + 1);
    };
    const sent: Promise<void>[] = [];
    let done = false;
    const load = (async () => {
      for (let i = 0; i < PER_MINUTE + 100; i++) {
        const send =
          i % 2 === 0
            ? request(url('/portal/endpoint/test'), {
                method: 'POST',
                headers: { ...FORM, cookie: portalA.cookie },
                body: new URLSearchParams({ csrf: portalA.csrf }).toString(),
                timeoutMs: 30_000,
              }).then((res) => count('test', res))
            : (i % 4 === 1
                ? request(url('/portal/deliveries'), {
                    headers: { cookie: portalA.cookie },
                    timeoutMs: 30_000,
                  })
                : i % 8 === 3
                  ? json(url('/v1/partners/webhooks/endpoint/enable'), 'POST', a.basic)
                  : json(url('/v1/partners/webhooks/deliveries'), 'GET', a.basic)
              ).then((res) => count('other', res));
        sent.push(send);
        await sleep(25);
      }
      await Promise.all(sent);
      done = true;
    })();

    // B meanwhile: its overview and its delivery log, one after the other, as a person clicks.
    const latencies: number[] = [];
    const bStatuses = new Set<number>();
    for (let i = 0; !done; i++) {
      const res = await request(url(i % 2 === 0 ? '/portal' : '/portal/deliveries'), {
        headers: { cookie: portalB.cookie },
        timeoutMs: 30_000,
      });
      latencies.push(res.elapsedMs);
      bStatuses.add(res.status);
      await sleep(50);
    }
    await load;

    // A did hang and did spend its budget: slow test events answered, the rest refused (its
    // requests under way, its hourly endpoint tests, its minute), and the API refuses it now.
    expect(receiver.requests(a.hook).length).toBeGreaterThan(0);
    expect(statuses.test.get(429) ?? 0).toBeGreaterThan(0);
    expect(statuses.other.get(429) ?? 0).toBeGreaterThan(0);
    expect((await json(url('/v1/partners/webhooks/deliveries'), 'GET', a.basic)).status).toBe(429);

    const figure = p99(latencies);
    console.log(
      `B's portal pages while A's endpoint hung and A spent its budget: ${latencies.length} pages, ` +
        `p99 ${figure.toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms; ` +
        `A's test events ${JSON.stringify([...statuses.test])}, A's other requests ${JSON.stringify([...statuses.other])}`,
    );
    expect([...bStatuses]).toEqual([200]);
    expect(latencies.length).toBeGreaterThanOrEqual(50);
    expect(figure).toBeLessThan(1000);
  });
});
