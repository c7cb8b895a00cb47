import { API_LIMITS } from '../../limits';
import {
  fieldsContract,
  listOf,
  oneOf,
  optional,
  optionalText,
  readBoolean,
  readFields,
  readString,
  text,
  timestampText,
  wholeNumber,
  type FieldRead,
  type FieldReads,
  type Read,
} from '../../validate';

const objectOf =
  <S extends FieldReads>(fields: S): FieldRead<Read<S>> =>
  (contract, record, field) =>
    readFields(`${contract} ${field}`, record[field], fields);

const EXPORT_PROFILE = {
  user_id: text(API_LIMITS.idMaxLength),
  email: text(API_LIMITS.emailMaxLength),
  name: readString,
  role: readString,
  country: readString,
  photo_url: optionalText(),
  membership: objectOf({
    tier: oneOf(['free', 'premium']),
    source: oneOf(['self', 'sponsored', 'vessel']),
    since: timestampText,
    expires_at: optional(timestampText),
  }),
  record_updated_at: timestampText,
};

/** Each sea-time entry as it was recorded. */
const EXPORT_SEA_TIME_ENTRY = {
  date: text(10),
  days_at_sea: wholeNumber,
  nautical_miles: wholeNumber,
  role: readString,
  verified: readBoolean,
  recorded_at: timestampText,
};

/** Each vessel period as it stands now (amended periods in their latest version). */
const EXPORT_VESSEL_PERIOD = {
  id: text(100),
  imo: text(20),
  name: readString,
  role: readString,
  period_start: timestampText,
  period_end: timestampText,
  days: wholeNumber,
  nautical_miles: wholeNumber,
};

const MEMBER_EXPORT = {
  profile: objectOf(EXPORT_PROFILE),
  sea_time: listOf(EXPORT_SEA_TIME_ENTRY),
  vessels: listOf(EXPORT_VESSEL_PERIOD),
};
export type MemberRecordExport = Read<typeof MEMBER_EXPORT>;

/** `crew.member.export`: the member's whole record for their data export; `member_not_found` without one. */
export const CREW_MEMBER_EXPORT = fieldsContract(
  'crew.member.export',
  ['consent-ui'],
  { user_id: text(API_LIMITS.idMaxLength) },
  MEMBER_EXPORT,
);
