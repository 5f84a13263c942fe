import 'reflect-metadata';

/**
 * The kinds of company-owned records a request body may name. The module owning each kind
 * registers which company its records belong to (`RecordCompanyResolvers`).
 */
export type ReferenceKind =
  | 'agent'
  | 'issue'
  | 'project'
  | 'goal'
  | 'workspace'
  | 'label'
  | 'comment'
  | 'run'
  | 'cost_event'
  | 'attachment'
  | 'asset'
  | 'secret'
  | 'routine'
  | 'approval'
  | 'document_revision'
  | 'folder';

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
