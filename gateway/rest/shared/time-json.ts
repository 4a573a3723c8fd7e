import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';

/** A proto timestamp as the REST API shows it: ISO 8601 in UTC, or null when absent. */
export function isoOrNull(ts: Timestamp | undefined): string | null {
  return ts ? timestampDate(ts).toISOString() : null;
}
