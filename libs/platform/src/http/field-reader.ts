import {
  FIELD_FORMATS,
  type FieldError,
  type FieldSpec,
  type FieldSpecs,
  type FieldValues,
} from '@svc/contracts';
import { ValidationProblem } from './problem';

/** `YYYY-MM-DD` that names a real calendar day (Date.parse would turn 02-30 into 03-01). */
export function isCalendarDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** ISO 8601 instants: a date-time with `Z` or an offset, or a bare date (00:00 UTC). */
const TIMESTAMP =
  /^(\d{4}-\d{2}-\d{2})(?:T([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,6})?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/;

export function parseTimestamp(text: string): Date | undefined {
  const m = TIMESTAMP.exec(text);
  if (!m || !isCalendarDate(m[1])) return undefined;
  const ms = Date.parse(m[2] === undefined ? `${m[1]}T00:00:00Z` : text);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/** A UTF-16 half without its other half: no UTF-8 can spell it, so it could only be stored as U+FFFD. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

interface StringRule {
  readonly min?: number;
  readonly max: number;
  readonly pattern?: RegExp;
  readonly patternMessage?: string;
}

/** Reads a body or query field by field, so one 422 names every bad field; `done()` throws before a placeholder is used. */
export class FieldReader {
  private readonly errors: FieldError[] = [];

  private constructor(
    private readonly input: Readonly<Record<string, unknown>>,
    private readonly inQuery = false,
  ) {}

  /** A JSON object body; anything else (an array, a string, no body) is one error on `body`. */
  static body(body: unknown): FieldReader {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new ValidationProblem([{ field: 'body', message: 'must be a JSON object' }]);
    }
    return new FieldReader(body as Record<string, unknown>);
  }

  /** Query parameters as Fastify parses them (a repeated name becomes an array). */
  static query(query: unknown): FieldReader {
    return new FieldReader(
      typeof query === 'object' && query !== null ? (query as Record<string, unknown>) : {},
      true,
    );
  }

  /** A declaration's fields (libs/contracts); a body may hold no others, a query's others are ignored. */
  fields<S extends FieldSpecs>(specs: S): FieldValues<S> {
    if (!this.inQuery) this.onlyFields(Object.keys(specs));
    return Object.fromEntries(
      Object.entries(specs).map(([name, spec]) => [name, this.field(name, spec)]),
    ) as FieldValues<S>;
  }

  private field(name: string, spec: FieldSpec): unknown {
    const value = this.input[name];
    const values = 'enum' in spec ? spec.enum : undefined;
    const oneOf = `must be one of ${values?.join(', ')}${spec.nullable ? ', or null' : ''}`;
    if (this.inQuery && spec.type === 'integer') return this.queryInteger(name, spec.minimum, spec.maximum);
    if (this.inQuery && spec.type === 'string') {
      const text = this.queryString(name, spec.maxLength ?? Math.max(...(values ?? []).map((v) => v.length)));
      if (text !== undefined && values && !values.includes(text)) this.fail(name, oneOf);
      return text;
    }
    if ((value === undefined && !spec.required) || (value === null && spec.nullable))
      return spec.nullable ? null : undefined;
    if (spec.type === 'integer') return this.integer(name, spec.minimum, spec.maximum);
    if (spec.type === 'timestamp') return this.timestamp(name);
    if (!spec.enum)
      return this.string(name, {
        min: spec.minLength,
        max: spec.maxLength,
        ...FIELD_FORMATS[spec.format ?? 'none'],
      });
    if (typeof value === 'string' && spec.enum.includes(value)) return value;
    this.fail(name, oneOf);
    return null;
  }

  has(field: string): boolean {
    return this.input[field] !== undefined;
  }

  fail(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  /** Records `message` for a present field, "is required" for a missing one; returns `placeholder`. */
  private invalid<T>(field: string, message: string, placeholder: T): T {
    this.fail(field, this.input[field] === undefined ? 'is required' : message);
    return placeholder;
  }

  /** Every field not in `allowed` is an error: a misspelt field is refused, not silently ignored. */
  onlyFields(allowed: readonly string[]): this {
    for (const key of Object.keys(this.input)) {
      if (!allowed.includes(key))
        this.fail(key, `is not a field of this request; expected ${allowed.join(', ')}`);
    }
    return this;
  }

  string(field: string, rule: StringRule): string {
    const value = this.input[field];
    const min = rule.min ?? 1;
    if (typeof value !== 'string') return this.invalid(field, 'must be a string', '');
    const trimmed = value.trim();
    if (trimmed.includes('\u0000')) {
      // PostgreSQL text cannot hold it: refused here with the field named, not by the database.
      this.fail(field, 'must not contain a NUL character');
    } else if (LONE_SURROGATE.test(trimmed)) {
      // A JSON escape (`"\udcff"`) can carry one in a UTF-8 body; stored, it would read back mangled.
      this.fail(field, 'must be Unicode text (it holds a lone surrogate)');
    } else if (trimmed.length < min || trimmed.length > rule.max) {
      this.fail(field, `must be ${min}-${rule.max} characters long`);
    } else if (rule.pattern && !rule.pattern.test(trimmed)) {
      this.fail(field, rule.patternMessage ?? `has an invalid format`);
    }
    return trimmed;
  }

  optionalString(field: string, rule: StringRule): string | undefined {
    return this.has(field) ? this.string(field, rule) : undefined;
  }

  integer(field: string, min: number, max: number): number {
    const value = this.input[field];
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
    return this.invalid(field, `must be an integer from ${min} to ${max}`, min);
  }

  optionalInteger(field: string, min: number, max: number): number | undefined {
    return this.has(field) ? this.integer(field, min, max) : undefined;
  }

  queryInteger(field: string, min: number, max: number): number | undefined {
    const value = this.input[field];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) {
      this.fail(field, `must be an integer from ${min} to ${max}`);
      return undefined;
    }
    return Number(value);
  }

  queryString(field: string, max: number): string | undefined {
    const value = this.input[field];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.length === 0 || value.length > max) {
      this.fail(field, `must be given once, 1-${max} characters long`);
      return undefined;
    }
    return value;
  }

  boolean(field: string): boolean {
    const value = this.input[field];
    return typeof value === 'boolean' ? value : this.invalid(field, 'must be true or false', false);
  }

  optionalBoolean(field: string): boolean | undefined {
    return this.has(field) ? this.boolean(field) : undefined;
  }

  date(field: string): string {
    const value = this.input[field];
    if (typeof value === 'string' && isCalendarDate(value)) return value;
    return this.invalid(field, 'must be a calendar date (YYYY-MM-DD)', '1970-01-01');
  }

  timestamp(field: string): Date {
    const value = this.input[field];
    const parsed = typeof value === 'string' ? parseTimestamp(value) : undefined;
    return (
      parsed ??
      this.invalid(field, 'must be an ISO 8601 timestamp with Z or an offset, or a date', new Date(0))
    );
  }

  optionalTimestamp(field: string): Date | undefined {
    return this.has(field) ? this.timestamp(field) : undefined;
  }

  nullableUrl(field: string, max: number): string | null {
    const value = this.input[field];
    if (value === null) return null;
    if (typeof value !== 'string' || value.length > max || !isHttpUrl(value)) {
      this.fail(field, `must be an absolute http(s) URL of at most ${max} characters, or null`);
      return null;
    }
    return value;
  }

  /** Throws the 422 with every collected error; returns when the input was valid. */
  done(): void {
    if (this.errors.length > 0) throw new ValidationProblem(this.errors);
  }
}

function isHttpUrl(value: string): boolean {
  return URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol);
}
