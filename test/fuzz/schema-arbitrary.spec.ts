import fc from 'fast-check';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { JsonObject } from '@svc/contracts';
import { DOCUMENT, resolve } from '../support/contract';
import { operations, validValue, wrongValue } from './schema-arbitrary';

/**
 * The fuzzer's generic JSON Schema → arbitrary: what it calls valid must be valid, or its
 * "valid" requests would test nothing but the 422 path; what it calls wrong must be refused.
 */
const ajv = new Ajv2020({ strict: false, validateFormats: true });
addFormats(ajv);
ajv.addSchema({ ...DOCUMENT, $id: 'doc' } as object);
const compile = (schema: JsonObject) =>
  ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"doc#/components/')) as object);

const schemas = operations().flatMap((op) => [
  ...op.parameters.map((p) => ({ where: `${op.key} ${p.in} ${p.name}`, schema: p.schema })),
  ...(op.body ? [{ where: `${op.key} body`, schema: op.body.schema }] : []),
]);

describe('schema arbitraries', () => {
  it.each(schemas)('draws only valid values for $where', ({ schema }) => {
    const validate = compile(schema);
    for (const value of fc.sample(validValue(schema), { seed: 7, numRuns: 60 }))
      expect({ value, valid: validate(value), errors: validate.errors }).toMatchObject({ valid: true });
  });

  it('draws values a typed field refuses', () => {
    const schema = resolve({ $ref: '#/components/schemas/ReconcileRequest' }).properties as Record<
      string,
      JsonObject
    >;
    const validate = compile(schema.max_cancel);
    const samples = fc.sample(wrongValue(schema.max_cancel), { seed: 7, numRuns: 200 });
    expect(samples.filter((v) => validate(v)).length).toBeLessThan(samples.length / 4);
    expect(samples.some((v) => typeof v === 'string')).toBe(true);
  });
});
