import { ValidateIf } from 'class-validator';

/**
 * A field that may be omitted but, when sent, must pass its validators: unlike `@IsOptional()`,
 * `null` is validated (and refused) instead of skipped. For required columns in partial updates,
 * where `null` cannot mean "clear".
 */
export const OmittableNotNull = () => ValidateIf((_: object, value: unknown) => value !== undefined);

/** A field that may be omitted or `null` (clears it); any other value must pass its validators. */
export const Nullable = () => ValidateIf((_: object, value: unknown) => value !== undefined && value !== null);
