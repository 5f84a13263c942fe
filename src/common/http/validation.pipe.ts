import { ArgumentMetadata, ValidationError, ValidationPipe, ValidationPipeOptions } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { DomainError } from '../errors/domain-error';

export interface ValidationFieldError {
  field: string;
  messages: string[];
}

const OPTIONS: ValidationPipeOptions = { whitelist: true, transform: true, transformOptions: { enableImplicitConversion: false } };

/** class-validator's constraint for a property no decorator declares (with forbidNonWhitelisted) */
const UNKNOWN = 'whitelistValidation';

/** The fields a DTO class declares (for "did you mean"). */
function declaredFields(target: object | undefined): string[] {
  if (!target) return [];
  const metas = getMetadataStorage().getTargetValidationMetadatas(target.constructor, '', true, false);
  return [...new Set(metas.map((m) => m.propertyName))];
}

/** Edit distance of two short strings (for suggestions only). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

function unknownMessage(field: string, name: string, target: object | undefined): string {
  const near = declaredFields(target)
    .map((f) => ({ f, d: distance(name, f) }))
    .filter(({ d }) => d <= Math.max(1, Math.floor(name.length / 3)))
    .sort((x, y) => x.d - y.d)[0];
  return `${field} is not a known field${near ? ` (did you mean ${near.f}?)` : ''}`;
}

/** The failures as `{ field, messages }`, nested fields as `a.b`, unknown fields named as such. */
export function flatten(errors: ValidationError[], parent = ''): ValidationFieldError[] {
  return errors.flatMap((e) => {
    const field = parent ? `${parent}.${e.property}` : e.property;
    const messages = Object.entries(e.constraints ?? {}).map(([k, m]) => (k === UNKNOWN ? unknownMessage(field, e.property, e.target) : m));
    return [...(messages.length ? [{ field, messages }] : []), ...flatten(e.children ?? [], field)];
  });
}

const failure = (fields: ValidationFieldError[]): DomainError =>
  new DomainError(400, 'validation_failed', `Validation failed: ${fields.map((f) => f.messages.join(', ')).join('; ')}`, { fields });

class Refused extends Error {
  constructor(readonly errors: ValidationError[]) {
    super('validation failed');
  }
}

/**
 * The global validation: DTO rules, unknown fields dropped (`whitelist`). A request with unknown
 * fields that is otherwise valid is accepted as before (clients, the board UI among them, send
 * extra fields: read-only ones of a record they edit, newer ones); a request refused anyway also
 * names its unknown fields, so `{"nam": "x"}` answers that `nam` is not a known field (did you mean
 * name?) beside what is wrong with `name`. Failures: 400 `validation_failed` with `fields`.
 */
export class RequestValidationPipe extends ValidationPipe {
  private readonly strict = new ValidationPipe({
    ...OPTIONS,
    forbidNonWhitelisted: true,
    // the object each error was found in: its class names the fields it declares (for suggestions)
    validationError: { target: true },
    exceptionFactory: (errors) => new Refused(errors),
  });

  constructor() {
    super({ ...OPTIONS, exceptionFactory: (errors) => failure(flatten(errors)) });
  }

  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    try {
      return await super.transform(value, metadata);
    } catch (err) {
      if (!(err instanceof DomainError) || err.code !== 'validation_failed') throw err;
      const strict = await this.strict.transform(value, metadata).then(
        () => null,
        (e: unknown) => (e instanceof Refused ? e.errors : null),
      );
      if (!strict) throw err;
      const fields = flatten(strict);
      // unknown fields first: a misspelt name explains the "missing" one after it
      const unknown = (f: ValidationFieldError) => f.messages.some((m) => m.includes(' is not a known field'));
      throw failure([...fields.filter(unknown), ...fields.filter((f) => !unknown(f))]);
    }
  }
}
