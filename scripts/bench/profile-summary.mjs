// Summarises a V8 .cpuprofile (from BENCH_PROFILE=1): self time by package (or app/lib folder) and
// the top functions, so a bench result can say where the time goes without a profile viewer.
// Run: node scripts/bench/profile-summary.mjs bench/profiles/auth-server.cpuprofile [top=25] [inclusive-regex]
// With a regex, also the inclusive time (the function and all it called) of the frames whose
// `name package/file:line` matches, e.g. 'end node:_http_outgoing|submit pg|Pipeline.exec'.
import fs from 'node:fs';

const [file, top = '25', inclusive] = process.argv.slice(2);
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i += 1) {
  self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (dt[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);

function where(url) {
  if (!url) return '(native/V8)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  const own = /\/dist\/((?:apps|libs)\/[^/]+)\/src\/([^/]+)/.exec(url);
  if (own) return `${own[1]}/${own[2]}`;
  if (url.startsWith('node:')) return url.split('/')[0];
  return url;
}

const groups = new Map();
const functions = new Map();
for (const [id, us] of self) {
  const { callFrame } = byId.get(id);
  const name = callFrame.functionName || '(anonymous)';
  const key = ['(idle)', '(program)', '(garbage collector)'].includes(name) ? name : where(callFrame.url);
  groups.set(key, (groups.get(key) ?? 0) + us);
  const fn = `${name} ${where(callFrame.url)}`;
  functions.set(fn, (functions.get(fn) ?? 0) + us);
}
const busy = total - (groups.get('(idle)') ?? 0);
const pct = (us) => `${((us / busy) * 100).toFixed(1).padStart(5)} %`;
console.log(
  `${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (shares below are of busy time)`,
);
console.log('\nby package / folder');
for (const [k, us] of [...groups]
  .filter(([k]) => k !== '(idle)')
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(top)))
  console.log(`${pct(us)}  ${k}`);
console.log('\ntop functions (self time)');
for (const [k, us] of [...functions]
  .filter(([k]) => !k.startsWith('(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(top)))
  console.log(`${pct(us)}  ${k}`);

if (inclusive) {
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frame = (f) =>
    `${f.functionName || '(anonymous)'} ${(f.url || '').split('node_modules/').pop().split('/').slice(0, 3).join('/')}:${f.lineNumber}`;
  const re = new RegExp(inclusive);
  const incl = new Map();
  for (const [id, us] of self) {
    if (byId.get(id).callFrame.functionName === '(idle)') continue;
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const k = frame(byId.get(cur).callFrame);
      if (seen.has(k) || !re.test(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + us);
    }
  }
  console.log('\ninclusive time of the matching frames');
  for (const [k, us] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, Number(top)))
    console.log(`${pct(us)}  ${k}`);
}
