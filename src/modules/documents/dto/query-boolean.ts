import { Transform } from 'class-transformer';

/** `true`/`1` and `false`/`0` in a query string become booleans; anything else is left for validation. */
export const QueryBoolean = () =>
  Transform(({ value }) => (value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value));
