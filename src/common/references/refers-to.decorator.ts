import 'reflect-metadata';
import type { RecordKind } from '../../database/table-owners';

/**
 * The kinds of company-owned records a body may name: the keys of RECORD_TABLES in the owner map
 * (src/database/table-owners.ts), whose owners register which company their records belong to.
 */
export type ReferenceKind = RecordKind;

/** A field's kind, or (for a free-form object such as a wake payload) the kinds of its keys. */
export type ReferenceSpec = ReferenceKind | Record<string, ReferenceKind>;

const REFERS_TO_KEY = 'service:refers-to';

/**
 * Declares that a body field holds the id (or ids) of a company-owned record. The global
 * reference check (`CompanyReferencesInterceptor`) answers 422 `invalid_reference` naming the
 * field when such an id belongs to another company than the route's.
 */
export function RefersTo(spec: ReferenceSpec): PropertyDecorator {
  return (target, key) => {
    const ctor = target.constructor;
    const own: Array<[string, ReferenceSpec]> = Reflect.getOwnMetadata(REFERS_TO_KEY, ctor) ?? [
      ...(Reflect.getMetadata(REFERS_TO_KEY, ctor) ?? []),
    ];
    own.push([String(key), spec]);
    Reflect.defineMetadata(REFERS_TO_KEY, own, ctor);
  };
}

/** The declared reference fields of a DTO class (inherited ones included). */
export function referenceFields(cls: unknown): Array<[string, ReferenceSpec]> {
  if (typeof cls !== 'function') return [];
  return Reflect.getMetadata(REFERS_TO_KEY, cls) ?? [];
}
