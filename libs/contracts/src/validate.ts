import { ContractViolation, isRecord } from './rpc/rpc';

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

export function readOptionalString(
  contract: string,
  record: Record<string, unknown>,
  field: string,
  maxLength = 4096,
): string | undefined {
  return record[field] === undefined || record[field] === null
    ? undefined
    : readString(contract, record, field, maxLength);
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

export function readOneOf<const T extends string>(
  contract: string,
  record: Record<string, unknown>,
  field: string,
  values: readonly T[],
): T {
  const value = record[field];
  if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
    throw new ContractViolation(contract, `\`${field}\` must be one of ${values.join(', ')}`);
  }
  return value as T;
}
