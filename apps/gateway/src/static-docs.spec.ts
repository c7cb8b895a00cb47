import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const staticDir = join(__dirname, '..', 'static');
const read = (file: string) => readFileSync(join(staticDir, file), 'utf8');

/** The gateway serves these until the real OpenAPI description is built; they must not pass for it. */
describe('placeholder API description', () => {
  it('is an OpenAPI 3.1 document, version 1.0.0, that says the full description is not published yet', () => {
    const doc = JSON.parse(read('openapi.json'));
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.info.description).toMatch(/placeholder/i);
    expect(doc.info.description).toMatch(/not published yet/);
    expect(doc.paths).toEqual({});
  });

  it('has a YAML twin with the same content', () => {
    expect(parse(read('openapi.yaml'))).toEqual(JSON.parse(read('openapi.json')));
  });

  it('has a docs page that says the same', () => {
    const html = read('docs/index.html');
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toMatch(/not published yet/);
  });
});
