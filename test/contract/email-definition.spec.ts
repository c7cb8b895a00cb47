import fc from 'fast-check';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import {
  EMAIL_PATTERN,
  fieldSchema,
  isEmailAddress,
  normaliseEmail,
  PROVISION_SEAT_BODY,
} from '@svc/contracts';

/**
 * One definition of an e-mail address: the parser's (isEmailAddress, EMAIL_PATTERN), the
 * description's `pattern`, and its `format: email` as the contract checks read it (ajv-formats,
 * the validator of test/support/contract.ts and the fuzzer) agree on every input, and a
 * normalised address is still one, so what provisioning stores reads back valid.
 */
const ajv = new Ajv2020({ strict: false, validateFormats: true });
addFormats(ajv);
const byFormat = ajv.compile({ type: 'string', format: 'email' });
const byDescription = ajv.compile(fieldSchema(PROVISION_SEAT_BODY.email));

const ASCII = [...Array(128).keys()].map((c) => String.fromCharCode(c)).join('');
const near = fc.string({
  unit: fc.constantFrom(...'aZ9.-_@+"\\ (),:;<>[]ÿé\u0000\udcff'.split(''), ...ASCII.slice(32, 127)),
  maxLength: 24,
});

describe('the e-mail definition', () => {
  it('is the description’s pattern, beside its format', () => {
    expect(fieldSchema(PROVISION_SEAT_BODY.email)).toMatchObject({ format: 'email', pattern: EMAIL_PATTERN });
  });

  it.each([
    ['alex.morgan@sandbox.test', true],
    ['A.B+tag@Sub-1.Example.COM', true],
    ["o'hara!#$%&*/=?^_`{|}~@x.io", true],
    ['\u00ffalex.morgan@sandbox.test', false],
    ['a..b@x.test', false],
    ['.a@x.test', false],
    ['a@x', false],
    ['a@-x.test', false],
    ['a@x-.test', false],
    ['a@x_y.test', false],
    ['"a b"@x.test', false],
    ['a@[127.0.0.1]', false],
    [' a@x.test', false],
    ['a@x.test\n', false],
  ])('%j: %s, by the parser, the pattern and the format alike', (email, valid) => {
    expect([isEmailAddress(email), byDescription(email), byFormat(email)]).toEqual([valid, valid, valid]);
  });

  it('agrees with format: email on drawn near-misses and on drawn addresses', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          near,
          fc.emailAddress(),
          near.map((s) => `${s}@x.test`),
        ),
        (email) => {
          expect({ email, parser: isEmailAddress(email) }).toEqual({ email, parser: byFormat(email) });
          expect(byDescription(email)).toBe(byFormat(email) && email.length <= 320);
          if (isEmailAddress(email)) expect(byFormat(normaliseEmail(email))).toBe(true);
        },
      ),
      { numRuns: 3000, seed: 38 },
    );
  });
});
