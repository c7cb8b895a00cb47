import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PROBLEM_GUIDE, PROBLEMS, problemExample, type ProblemCode } from '@svc/contracts';
import type { Marked as MarkedClass } from 'marked';
import { DOCS_PLACEHOLDERS, escapeHtml } from './placeholders';

/**
 * Builds `/docs/` at `npm run build`: the partner guides, a page per Problem code, the reference and
 * its Redoc bundle; environment values stay placeholders that the generator fills in at start-up.
 */

interface Page {
  readonly path: string;
  readonly title: string;
  readonly body: string;
}

const NAV: readonly (readonly [string, string])[] = [
  ['/docs/', 'Overview'],
  ['/docs/reference', 'API reference'],
  ['/docs/quickstart', 'Quickstart'],
  ['/docs/webhooks', 'Webhooks'],
  ['/docs/sponsorship', 'Sponsorship'],
  ['/docs/portal', 'Portal'],
  ['/docs/errors/', 'Errors'],
];

const GUIDES = [
  { source: 'index.md', path: '/docs/', title: 'Crew record service: partner documentation' },
  { source: 'quickstart.md', path: '/docs/quickstart', title: 'Quickstart: OAuth 2.0 with PKCE' },
  { source: 'webhooks.md', path: '/docs/webhooks', title: 'Webhooks' },
  { source: 'sponsorship.md', path: '/docs/sponsorship', title: 'Sponsorship' },
  { source: 'portal.md', path: '/docs/portal', title: 'Partner portal' },
] as const;

/** An HTML document of the site; `head` and `body` are its own lines, already indented. */
function htmlDocument(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(title)}</title>
    <link rel="icon" href="/docs/assets/favicon.svg" type="image/svg+xml" />
${head}
  </head>
  <body>
${body}
  </body>
</html>
`;
}

function layout(page: Page): string {
  const nav = NAV.map(
    ([href, text]) => `<a href="${href}"${href === page.path ? ' aria-current="page"' : ''}>${text}</a>`,
  ).join('\n        ');
  return htmlDocument(
    page.title,
    '    <link rel="stylesheet" href="/docs/assets/docs.css" />',
    `    <header class="site">
      <a class="brand" href="/docs/">Crew record service</a>
      <nav aria-label="Documentation">
        ${nav}
      </nav>
    </header>
    <main>
${page.body}
    </main>`,
  );
}

/** `<!-- include: examples/x.mjs -->` becomes a code block with the file, so the examples stay runnable files. */
function withIncludes(markdown: string, sourceDir: string): string {
  return markdown.replace(/<!-- include: ([\w./-]+) -->/g, (_, file: string) => {
    const text = readFileSync(join(sourceDir, file), 'utf8').trimEnd();
    const lang = { '.mjs': 'js', '.js': 'js', '.py': 'python', '.sh': 'sh' }[extname(file)] ?? '';
    return `\`\`\`${lang}\n${text}\n\`\`\``;
  });
}

type MarkdownRenderer = (markdown: string) => string;

function loadMarked(): MarkdownRenderer {
  // Build-time only (a dev dependency); the gateway's runtime never loads this module.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Marked } = require('marked') as { Marked: typeof MarkedClass };
  const marked = new Marked({ gfm: true, async: false });
  return (markdown) => marked.parse(markdown) as string;
}

function errorPage(code: ProblemCode, md: MarkdownRenderer): Page {
  const problem = PROBLEMS[code];
  const guide = PROBLEM_GUIDE[code];
  const example = JSON.stringify(problemExample(code, DOCS_PLACEHOLDERS.docsUrl, '…'), null, 2);
  const retry = {
    yes: 'Yes, after a pause (with backoff).',
    'after a change': 'Only after changing the request or your setup.',
    no: 'No: the same request gets the same answer.',
  }[guide.retry];
  return {
    path: `/docs/errors/${code}`,
    title: `${code}: ${problem.title}`,
    body: `<h1><code>${code}</code>: ${escapeHtml(problem.title)}</h1>
<dl class="facts">
  <dt>Status</dt><dd>${problem.status}</dd>
  <dt>Problem <code>type</code></dt><dd><code>${DOCS_PLACEHOLDERS.docsUrl}/errors/${code}</code></dd>
  <dt>Where</dt><dd>${md(guide.where)}</dd>
  <dt>What it means</dt><dd>${md(guide.meaning)}</dd>
  <dt>What to do</dt><dd>${md(guide.action)}</dd>
  <dt>Retry the same request?</dt><dd>${retry}</dd>
</dl>
<h2>Example</h2>
<pre><code>HTTP/1.1 ${problem.status}
Content-Type: application/problem+json
X-Request-Id: req_5f2c9a7e4b1d4c08a3e6f1b2c3d4e5f6

${escapeHtml(example)}</code></pre>
<p>Errors of <code>/v1/*</code> and of the gateway are RFC 7807 Problem Details; <code>instance</code> repeats the <code>X-Request-Id</code> header: quote it to partner support. The OAuth endpoints answer RFC 6749 errors instead (<code>error</code>, <code>error_description</code>).</p>
<p><a href="/docs/errors/">All error codes</a> · <a href="/docs/reference">API reference</a></p>`,
  };
}

function errorsIndex(): Page {
  const rows = (Object.keys(PROBLEMS) as ProblemCode[])
    .map(
      (code) =>
        `<tr><td>${PROBLEMS[code].status}</td><td><a href="/docs/errors/${code}"><code>${code}</code></a></td><td>${escapeHtml(PROBLEMS[code].title)}</td></tr>`,
    )
    .join('\n');
  return {
    path: '/docs/errors/',
    title: 'Error codes',
    body: `<h1>Error codes</h1>
<p>Every error of <code>/v1/*</code> and of the gateway is a Problem Details body whose <code>type</code> is <code>${DOCS_PLACEHOLDERS.docsUrl}/errors/&lt;code&gt;</code>, the page below for that code.</p>
<table>
<thead><tr><th>Status</th><th>Code</th><th>Title</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`,
  };
}

/** The API reference: Redoc renders /openapi.json in the browser; the bundle is served next to it. */
function referencePage(): string {
  return htmlDocument(
    'API reference: crew record service',
    `    <style>
      body { margin: 0; }
      .back { display: block; padding: 0.5rem 1rem; font-family: system-ui, sans-serif; border-bottom: 1px solid #d8e0e8; }
    </style>`,
    `    <a class="back" href="/docs/">← Partner documentation</a>
    <redoc spec-url="/openapi.json" hide-download-button="false" path-in-middle-panel="true"></redoc>
    <script src="/docs/assets/redoc.standalone.js"></script>`,
  );
}

/** Redoc's sidebar loads its logo from Redocly's CDN; the docs load nothing from elsewhere. */
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const LOCAL_LOGO = '/docs/assets/redoc-logo.svg';

/** The Redoc browser bundle from npm, with its one CDN URL pointed at this site. */
function redocBundle(): string {
  const bundle = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
  if (!bundle.includes(REDOC_CDN_LOGO)) {
    throw new Error(`the Redoc bundle no longer loads ${REDOC_CDN_LOGO}: check it for other CDN URLs`);
  }
  return bundle.split(REDOC_CDN_LOGO).join(LOCAL_LOGO);
}

/** Where a page's file goes: `/docs/x` → `docs/x.html`, `/docs/x/` → `docs/x/index.html`. */
function fileOf(path: string): string {
  const relative = path.replace(/^\//, '');
  return relative.endsWith('/') ? `${relative}index.html` : `${relative}.html`;
}

export function buildSite(outDir: string, sourceDir: string): string[] {
  const md = loadMarked();
  const pages: Page[] = GUIDES.map(({ source, ...page }) => ({
    ...page,
    body: md(withIncludes(readFileSync(join(sourceDir, source), 'utf8'), sourceDir)),
  }));
  pages.push(errorsIndex(), ...(Object.keys(PROBLEMS) as ProblemCode[]).map((code) => errorPage(code, md)));
  const written: string[] = [];
  const write = (relative: string, text: string) => {
    const file = join(outDir, relative);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    written.push(relative);
  };
  for (const page of pages) write(fileOf(page.path), layout(page));
  write(fileOf('/docs/reference'), referencePage());
  write('docs/assets/redoc.standalone.js', redocBundle());
  return written;
}

if (require.main === module) {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, source: { type: 'string', default: 'docs/partners' } },
  });
  if (!values.out) {
    process.stderr.write('usage: node build-site.js --out <dir> [--source docs/partners]\n');
    process.exit(2);
  }
  const written = buildSite(resolve(values.out), resolve(values.source));
  process.stdout.write(`docs: wrote ${written.length} files to ${values.out}\n`);
}
