import { EMAIL_PATTERN } from './email';
import { API_LIMITS } from './limits';
import { EVENT_TYPES } from './messaging';
import { closedObject, schemaRef, timestamp, type JsonObject } from './openapi/kit';

/** A public request's field, declared once for the description and the parsers; rules between fields stay in the app. */
export type FieldSpec = {
  readonly description?: string;
  readonly required?: boolean;
  readonly nullable?: boolean;
} & (
  | {
      readonly type: 'string';
      readonly format?: 'email';
      readonly minLength?: number;
      readonly maxLength: number;
      readonly enum?: never;
    }
  | {
      readonly type: 'string';
      readonly enum: readonly string[];
      /** What a query parser checks first; a longer value cannot be one of them anyway. */
      readonly maxLength?: number;
      /** The component schema the description shows instead of an inline one. */
      readonly component?: string;
    }
  | {
      readonly type: 'integer';
      readonly minimum: number;
      readonly maximum: number;
      readonly default?: number;
    }
  | { readonly type: 'timestamp' }
);
export type FieldSpecs = Readonly<Record<string, FieldSpec>>;

type BaseValue<F> = F extends { type: 'integer' }
  ? number
  : F extends { type: 'timestamp' }
    ? Date
    : F extends { enum: readonly (infer E)[] }
      ? E
      : string;
type Absent<F> = F extends { nullable: true } ? null : F extends { required: true } ? never : undefined;
/** A parser's result: an absent field is null when nullable, else undefined (a `default` is the app's to apply). */
export type FieldValues<S extends FieldSpecs> = { -readonly [K in keyof S]: BaseValue<S[K]> | Absent<S[K]> };

/** Formats checked by a pattern, which the description states beside `format` to pin it down. */
export const FIELD_FORMATS: Readonly<
  Record<string, { pattern: RegExp; patternMessage: string; schemaPattern: string }>
> = {
  email: {
    pattern: new RegExp(EMAIL_PATTERN),
    patternMessage: 'must be an e-mail address',
    schemaPattern: EMAIL_PATTERN,
  },
};

export function fieldSchema(spec: FieldSpec): JsonObject {
  if (spec.type === 'timestamp') return timestamp(spec.description ?? '', spec.nullable);
  if ('component' in spec && spec.component) return schemaRef(spec.component);
  const type = spec.nullable ? [spec.type, 'null'] : spec.type;
  const schema: JsonObject =
    spec.type === 'integer'
      ? { type, minimum: spec.minimum, maximum: spec.maximum, default: spec.default }
      : spec.enum
        ? { type, enum: spec.nullable ? [...spec.enum, null] : [...spec.enum] }
        : {
            type,
            format: spec.format,
            pattern: spec.format && FIELD_FORMATS[spec.format].schemaPattern,
            minLength: spec.minLength,
            maxLength: spec.maxLength,
          };
  schema.description = spec.description;
  for (const key of Object.keys(schema)) if (schema[key] === undefined) delete schema[key];
  return schema;
}

/** A JSON body of these fields and no others. */
export function bodySchema(fields: FieldSpecs, description?: string): JsonObject {
  const properties: JsonObject = {};
  for (const [name, spec] of Object.entries(fields)) properties[name] = fieldSchema(spec);
  return closedObject(
    properties,
    description,
    Object.keys(fields).filter((name) => fields[name].required),
  );
}

/** Seat lifecycle: live seats are `invited` and `active`; `ended` and `cancelled` are final. */
export const SEAT_STATUS_VALUES = ['invited', 'active', 'ended', 'cancelled'] as const;

/** `limit` and `cursor` of every keyset-paginated list. */
export const PAGE_QUERY = {
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: API_LIMITS.pageLimitMax,
    default: API_LIMITS.pageLimitDefault,
  },
  cursor: { type: 'string', minLength: 1, maxLength: API_LIMITS.cursorMaxLength },
} as const satisfies FieldSpecs;

/** `GET /v1/partners/sponsorships?status=&limit=&cursor=` */
export const SEAT_LIST_QUERY = {
  status: { type: 'string', maxLength: 20, enum: SEAT_STATUS_VALUES, component: 'SeatStatus' },
  ...PAGE_QUERY,
} as const satisfies FieldSpecs;

/** `POST /v1/partners/sponsorships`; that `expires_at` lies ahead, within the longest term, is the app's rule. */
export const PROVISION_SEAT_BODY = {
  email: {
    type: 'string',
    required: true,
    format: 'email',
    maxLength: API_LIMITS.emailMaxLength,
    description:
      'The member’s e-mail address, ASCII: a dot-atom local part, `@`, and a domain of two or more labels (the pattern states it exactly). Surrounding white space is trimmed; matched case-insensitively.',
  },
  external_ref: {
    type: 'string',
    nullable: true,
    minLength: 1,
    maxLength: API_LIMITS.refMaxLength,
    description: 'Your own id for the member; unique among your live seats.',
  },
  expires_at: {
    type: 'timestamp',
    nullable: true,
    description: `End of the sponsored term, in the future and at most ${API_LIMITS.sponsorshipMaxTermYears} years ahead; default (absent or null) ${API_LIMITS.sponsorshipTermMonths} months after provisioning.`,
  },
} as const satisfies FieldSpecs;

/** `POST /v1/partners/members/left`; that one of the ids names somebody is the app's rule. */
export const MEMBER_LEFT_BODY = {
  user_id: {
    type: 'string',
    nullable: true,
    minLength: 1,
    maxLength: API_LIMITS.idMaxLength,
    description: 'The service’s user id (`usr_…`); preferred.',
  },
  external_ref: {
    type: 'string',
    nullable: true,
    minLength: 1,
    maxLength: API_LIMITS.refMaxLength,
    description: 'Your own id of the member, as given when provisioning.',
  },
  reason: {
    type: 'string',
    nullable: true,
    enum: ['account_deleted', 'membership_lapsed'],
    description: 'Both reasons close the seat identically.',
  },
} as const satisfies FieldSpecs;

/** `failed`: another attempt is scheduled; `given_up`: none left (or a 410); `skipped`: endpoint disabled. */
export const PARTNER_DELIVERY_STATUS_VALUES = [
  'pending',
  'delivered',
  'failed',
  'given_up',
  'skipped',
] as const;

/** Replay sends finished deliveries only: a `failed` one's retries are still under way. */
export const REPLAYABLE_STATUS_VALUES = ['delivered', 'given_up', 'skipped'] as const;
export type PartnerDeliveryStatus = (typeof PARTNER_DELIVERY_STATUS_VALUES)[number];

/** `GET /v1/partners/webhooks/deliveries?status=&event_type=&since=&until=&limit=&cursor=` */
export const DELIVERY_LIST_QUERY = {
  status: {
    type: 'string',
    maxLength: 20,
    enum: PARTNER_DELIVERY_STATUS_VALUES,
    component: 'PartnerDeliveryStatus',
  },
  event_type: { type: 'string', maxLength: 50, enum: EVENT_TYPES, description: 'Only events of this type.' },
  since: { type: 'timestamp', description: 'Only deliveries created at or after this instant.' },
  until: { type: 'timestamp', description: 'Only deliveries created before this instant.' },
  ...PAGE_QUERY,
} as const satisfies FieldSpecs;

/** `POST /v1/partners/webhooks/replay`; the window's length and order are the app's rule. */
export const REPLAY_BODY = {
  since: {
    type: 'timestamp',
    required: true,
    description: 'Deliveries created at or after this instant.',
  },
  until: {
    type: 'timestamp',
    required: true,
    description: `Deliveries created before this instant; after \`since\`, at most ${API_LIMITS.webhookRedeliveryReplayMaxDays} days later.`,
  },
  status: {
    type: 'string',
    required: true,
    enum: REPLAYABLE_STATUS_VALUES,
    description:
      'Which finished deliveries to send again: `delivered`, `given_up` or `skipped` (while your endpoint was disabled). Deliveries still being retried (`failed`) are not replayed: their own attempts go on.',
  },
} as const satisfies FieldSpecs;
