import type { NestAppName } from './apps';
import { ContractViolation, isRecord, queueOf, type RpcContract, type RpcPattern } from './rpc/rpc';

/** Small readers for contract validators: each throws ContractViolation naming the field. */
export function readRecord(contract: string, input: unknown): Record<string, unknown> {
  if (!isRecord(input)) throw new ContractViolation(contract, 'expected an object');
  return input;
}

export function readString(
  contract: string,
  record: Record<string, unknown>,
  field: string,
  maxLength = 4096,
): string {
  const value = record[field];
  if (typeof value !== 'string' || value.length > maxLength) {
    throw new ContractViolation(contract, `\`${field}\` must be a string of at most ${maxLength} characters`);
  }
  // No app can store or compare it in PostgreSQL text, so it never crosses between apps.
  if (value.includes('\u0000')) throw new ContractViolation(contract, `\`${field}\` must not contain NUL`);
  return value;
}

export function readStringArray(contract: string, record: Record<string, unknown>, field: string): string[] {
  const value = record[field];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new ContractViolation(contract, `\`${field}\` must be an array of strings`);
  }
  return value as string[];
}

export function readStringMap(
  contract: string,
  record: Record<string, unknown>,
  field: string,
): Record<string, string> {
  const value = readRecord(contract, record[field]);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new ContractViolation(contract, `\`${field}.${k}\` must be a string`);
    out[k] = v;
  }
  return out;
}

export function readBoolean(contract: string, record: Record<string, unknown>, field: string): boolean {
  const value = record[field];
  if (typeof value !== 'boolean') throw new ContractViolation(contract, `\`${field}\` must be a boolean`);
  return value;
}

/** One field's reader, as the readers above are; a declaration of them reads a whole message. */
export type FieldRead<T> = (contract: string, record: Record<string, unknown>, field: string) => T;
export type FieldReads = Readonly<Record<string, FieldRead<unknown>>>;
type Maybe<S extends FieldReads> = {
  [K in keyof S]: undefined extends ReturnType<S[K]> ? K : never;
}[keyof S];
/** The message a declaration reads; a field whose reader may find nothing is optional. */
export type Read<S extends FieldReads> = { readonly [K in Exclude<keyof S, Maybe<S>>]: ReturnType<S[K]> } & {
  readonly [K in Maybe<S>]?: Exclude<ReturnType<S[K]>, undefined>;
};

/** Reads a whole message that a declaration of fields cannot state (a union, an answer or a Problem). */
export type MessageRead<T> = (contract: string, input: unknown) => T;
type Answer<A> = A extends MessageRead<infer T> ? T : A extends FieldReads ? Read<A> : never;

/** A contract whose request is a declaration read by `readFields`, and its answer one too or a reader. */
export function fieldsContract<Q extends FieldReads, A extends FieldReads | MessageRead<unknown>>(
  pattern: RpcPattern,
  callers: readonly NestAppName[],
  request: Q,
  answer: A,
): RpcContract<Read<Q>, Answer<A>> {
  const read: MessageRead<unknown> =
    typeof answer === 'function' ? answer : (contract, input) => readFields(contract, input, answer);
  return {
    pattern,
    queue: queueOf(pattern),
    callers,
    parseRequest: (input) => readFields(pattern, input, request),
    parseResponse: (input) => read(pattern, input) as Answer<A>,
  };
}

/** A partner check's answer: `{ valid: false }`, or `{ valid: true }` and the partner it found. */
export type PartnerCheck<P> = { readonly valid: false } | { readonly valid: true; readonly partner: P };

/** Reads a `PartnerCheck` whose partner is the declaration `fields`. */
export const partnerCheck =
  <S extends FieldReads>(fields: S): MessageRead<PartnerCheck<Read<S>>> =>
  (contract, input) => {
    const r = readRecord(contract, input);
    if (!readBoolean(contract, r, 'valid')) return { valid: false };
    return { valid: true, partner: readFields(contract, r.partner, fields) };
  };

/** Reads an object's fields in declaration order (the first bad one is named); absent optional ones are left out. */
export function readFields<S extends FieldReads>(contract: string, input: unknown, fields: S): Read<S> {
  const record = readRecord(contract, input);
  const out: Record<string, unknown> = {};
  for (const [field, read] of Object.entries(fields)) {
    const value = read(contract, record, field);
    if (value !== undefined) out[field] = value;
  }
  return out as Read<S>;
}

export const text =
  (maxLength?: number): FieldRead<string> =>
  (contract, record, field) =>
    readString(contract, record, field, maxLength);

/** Absent and null read as undefined; anything else must pass `read`. */
export const optional =
  <T>(read: FieldRead<T>): FieldRead<T | undefined> =>
  (contract, record, field) =>
    record[field] === undefined || record[field] === null ? undefined : read(contract, record, field);

export const optionalText = (maxLength?: number) => optional(text(maxLength));

export const oneOf =
  <const T extends string>(values: readonly T[]): FieldRead<T> =>
  (contract, record, field) => {
    const value = record[field];
    if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
      throw new ContractViolation(contract, `\`${field}\` must be one of ${values.join(', ')}`);
    }
    return value as T;
  };

/** A non-negative safe integer (a count, days, miles). */
export const wholeNumber: FieldRead<number> = (contract, record, field) => {
  const value = record[field];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ContractViolation(contract, `\`${field}\` must be a non-negative integer`);
  }
  return value;
};

export const timestampText: FieldRead<string> = (contract, record, field) => {
  const value = readString(contract, record, field, 40);
  if (Number.isNaN(Date.parse(value)))
    throw new ContractViolation(contract, `\`${field}\` must be a timestamp`);
  return value;
};

/** A SHA-256 digest in lower-case hex: only digests of secrets and tokens travel between apps. */
export const sha256Hex: FieldRead<string> = (contract, record, field) => {
  const value = readString(contract, record, field, 64);
  if (!/^[0-9a-f]{64}$/.test(value)) {
    throw new ContractViolation(contract, `\`${field}\` must be 64 hex characters`);
  }
  return value;
};

/** An array of `min` to `max` objects, each read with `fields`. */
export const listOf =
  <S extends FieldReads>(fields: S, max = Infinity, min = 0): FieldRead<Read<S>[]> =>
  (contract, record, field) => {
    const value = record[field];
    if (!Array.isArray(value) || value.length < min || value.length > max) {
      const bounds = max < Infinity ? ` of ${min} to ${max} entries` : '';
      throw new ContractViolation(contract, `\`${field}\` must be an array${bounds}`);
    }
    return value.map((item) => readFields(contract, item, fields));
  };

/** An array of at most `max` strings of `minLength` to `maxLength` characters. */
export const textList =
  (max: number, maxLength: number, minLength = 0): FieldRead<string[]> =>
  (contract, record, field) => {
    const value = record[field];
    const fits = (v: unknown) => typeof v === 'string' && v.length >= minLength && v.length <= maxLength;
    if (!Array.isArray(value) || value.length > max || !value.every(fits)) {
      throw new ContractViolation(
        contract,
        `\`${field}\` must be at most ${max} strings of ${minLength} to ${maxLength} characters`,
      );
    }
    return value as string[];
  };
