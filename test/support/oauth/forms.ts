import { assertFetchContract } from '../contract';

/**
 * Just enough HTML form handling for tests that drive the consent UI without a browser: forms
 * are read from the page as a person would use them (fields found by their label, buttons by
 * their text), and posted with a cookie jar.
 */
export interface HtmlForm {
  readonly action: string;
  readonly method: string;
  readonly inputs: readonly { name: string; value: string; type: string; id?: string }[];
  readonly buttons: readonly { name?: string; value?: string; text: string }[];
  readonly labels: Readonly<Record<string, string>>;
}

const attr = (tag: string, name: string): string | undefined => {
  const m = new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  return m ? decodeEntities(m[2] ?? m[3] ?? m[4] ?? '') : undefined;
};

export function decodeEntities(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

const textOf = (html: string) =>
  decodeEntities(html.replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();

export function parseForms(html: string): HtmlForm[] {
  const forms: HtmlForm[] = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const [, formAttrs, inner] = m;
    const inputs = [...inner.matchAll(/<input\b[^>]*>/gi)].map((i) => ({
      name: attr(i[0], 'name') ?? '',
      value: attr(i[0], 'value') ?? '',
      type: (attr(i[0], 'type') ?? 'text').toLowerCase(),
      id: attr(i[0], 'id'),
    }));
    const buttons = [...inner.matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/gi)].map((b) => ({
      name: attr(b[0], 'name'),
      value: attr(b[0], 'value'),
      text: textOf(b[2]),
    }));
    const labels: Record<string, string> = {};
    for (const l of inner.matchAll(/<label\b([^>]*)>([\s\S]*?)<\/label>/gi)) {
      const target = attr(l[0], 'for');
      if (target) labels[textOf(l[2])] = target;
    }
    forms.push({
      action: attr(`<form ${formAttrs}>`, 'action') ?? '',
      method: (attr(`<form ${formAttrs}>`, 'method') ?? 'get').toLowerCase(),
      inputs: inputs.filter((i) => i.name),
      buttons,
      labels,
    });
  }
  return forms;
}

/** The form holding a button with this text. */
export function formWithButton(html: string, buttonText: string): HtmlForm {
  const form = parseForms(html).find((f) => f.buttons.some((b) => b.text === buttonText));
  if (!form) throw new Error(`no form with a "${buttonText}" button in:\n${html.slice(0, 2000)}`);
  return form;
}

/** The body a browser would post: hidden and filled fields, plus the clicked button's name=value. */
export function submission(
  form: HtmlForm,
  byLabel: Record<string, string>,
  buttonText: string,
): URLSearchParams {
  const body = new URLSearchParams();
  const filled = new Map<string, string>();
  for (const [label, value] of Object.entries(byLabel)) {
    const id = form.labels[label];
    const input = form.inputs.find((i) => i.id === id);
    if (!input) throw new Error(`no field labelled "${label}"`);
    filled.set(input.name, value);
  }
  for (const input of form.inputs) {
    if (filled.has(input.name)) body.append(input.name, filled.get(input.name)!);
    else if (input.type === 'hidden' || input.value) body.append(input.name, input.value);
  }
  const button = form.buttons.find((b) => b.text === buttonText);
  if (button?.name) body.append(button.name, button.value ?? '');
  return body;
}

/** A browser-like client: a cookie jar, manual redirects, form posts. */
export class FormClient {
  readonly cookies = new Map<string, string>();
  /** Every cookie value any response ever set (for tests that look for them where they must not be). */
  readonly seenCookieValues = new Set<string>();

  /** Sent with every request (e.g. the `X-Forwarded-For` a gateway would add). */
  readonly headers: Record<string, string> = {};

  /** `aliases`: other origins that mean this server (PUBLIC_BASE_URL when it is not the one called). */
  constructor(
    readonly baseUrl: string,
    readonly aliases: readonly string[] = [],
  ) {}

  /** A URL on this server, with an alias origin replaced by the base. */
  local(pathOrUrl: string, relativeTo = this.baseUrl): URL | undefined {
    const url = new URL(pathOrUrl, relativeTo);
    const base = new URL(this.baseUrl);
    if (url.origin === base.origin) return url;
    if (!this.aliases.includes(url.origin)) return undefined;
    return new URL(`${url.pathname}${url.search}`, base);
  }

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async fetch(
    pathOrUrl: string,
    init: { method?: string; body?: URLSearchParams; headers?: Record<string, string> } = {},
  ) {
    const url = this.local(pathOrUrl) ?? new URL(pathOrUrl, this.baseUrl);
    const headers: Record<string, string> = { ...this.headers, ...init.headers };
    if (this.cookies.size) headers.cookie = this.cookieHeader();
    if (init.body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      headers,
      body: init.body?.toString(),
      redirect: 'manual',
    });
    // Every answer must match the OpenAPI description (test/support/contract.ts).
    await assertFetchContract(init.method ?? 'GET', url.toString(), res);
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else {
        this.cookies.set(name, value);
        this.seenCookieValues.add(value);
      }
    }
    return res;
  }

  /** Follows same-origin redirects (GET) and stops at the first answer that is not one, or at another origin. */
  async follow(res: Response, maxHops = 5): Promise<{ res: Response; url: string }> {
    let current = res;
    let url = res.url;
    for (let hop = 0; hop < maxHops && current.status >= 300 && current.status < 400; hop += 1) {
      const location = current.headers.get('location');
      if (!location) break;
      const next = this.local(location, url || this.baseUrl);
      if (!next) return { res: current, url: new URL(location, url || this.baseUrl).toString() };
      url = next.toString();
      current = await this.fetch(url);
    }
    return { res: current, url };
  }

  /** Submits the form that holds `buttonText`, filling fields by label. */
  async submit(html: string, buttonText: string, byLabel: Record<string, string> = {}): Promise<Response> {
    const form = formWithButton(html, buttonText);
    return this.fetch(form.action || '/', {
      method: form.method.toUpperCase(),
      body: submission(form, byLabel, buttonText),
    });
  }
}
