import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { from, Observable, switchMap } from 'rxjs';
import type { RequestWithActor } from '../auth/actor';
import { CompanyAccessService } from '../auth/company-access.service';
import { unprocessable } from '../errors/domain-error';
import { isUuid } from '../http/uuid';
import { RecordCompanyResolvers } from './record-company-resolvers.port';
import { ReferenceKind, referenceFields } from './refers-to.decorator';
import { RouteCompanyResolver } from './route-company';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The one reference check of every mutating route: each body field declared with `@RefersTo`
 * must name records of the route's company (the `:companyId` of the path, or the company of the
 * record the path names). An id of another company, or an unknown one, is refused with the same
 * 422 `{ code: 'invalid_reference', field }` before the handler runs (the answer must not tell
 * which); keys of free-form objects (wake payloads) refuse only other companies' ids. A caller
 * without access to the route's company gets the handler's 403/404.
 */
@Injectable()
export class CompanyReferencesInterceptor implements NestInterceptor {
  constructor(
    private readonly refs: RecordCompanyResolvers,
    private readonly access: CompanyAccessService,
    private readonly routes: RouteCompanyResolver,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (ctx.getType() !== 'http') return next.handle();
    const req = ctx.switchToHttp().getRequest<RequestWithActor & { routeOptions?: { url?: string } }>();
    if (!MUTATING.has(req.method) || !req.body || typeof req.body !== 'object') return next.handle();
    const fields = this.bodyReferenceFields(ctx);
    if (fields.length === 0) return next.handle();
    return from(this.check(req, fields)).pipe(switchMap(() => next.handle()));
  }

  /** The reference fields of a handler's body DTO: read from its metadata once per handler, not per request. */
  private readonly fieldsOf = new WeakMap<object, ReturnType<typeof referenceFields>>();

  private bodyReferenceFields(ctx: ExecutionContext) {
    const handler = ctx.getHandler();
    let fields = this.fieldsOf.get(handler);
    if (!fields) {
      fields = this.readBodyReferenceFields(ctx.getClass(), handler.name);
      this.fieldsOf.set(handler, fields);
    }
    return fields;
  }

  private readBodyReferenceFields(cls: object, handler: string) {
    const args: Record<string, { index: number; data?: unknown }> = Reflect.getMetadata(ROUTE_ARGS_METADATA, cls, handler) ?? {};
    const types: unknown[] = Reflect.getMetadata('design:paramtypes', (cls as { prototype: object }).prototype, handler) ?? [];
    for (const [key, arg] of Object.entries(args)) {
      if (key.split(':')[0] === String(RouteParamtypes.BODY) && arg.data === undefined) return referenceFields(types[arg.index]);
    }
    return [];
  }

  private async check(
    req: RequestWithActor & { routeOptions?: { url?: string } },
    fields: ReturnType<typeof referenceFields>,
  ): Promise<void> {
    const body = req.body as Record<string, unknown>;
    // declared fields are relations: an unknown id is refused like another company's. Keys of a
    // free-form object (a wake payload's context) may name records that do not exist; only other
    // companies' ids are refused there.
    const wanted: Array<{ field: string; kind: ReferenceKind; ids: string[]; strict: boolean }> = [];
    for (const [field, spec] of fields) {
      if (typeof spec === 'string') wanted.push({ field, kind: spec, ids: uuids(body[field]), strict: true });
      else {
        const inner = body[field];
        if (!inner || typeof inner !== 'object' || Array.isArray(inner)) continue;
        for (const [key, kind] of Object.entries(spec))
          wanted.push({ field: `${field}.${key}`, kind, ids: uuids((inner as Record<string, unknown>)[key]), strict: false });
      }
    }
    const todo = wanted.filter((w) => w.ids.length > 0);
    if (todo.length === 0) return;
    const companyId = await this.routeCompany(req);
    if (!companyId || !req.actor || !(await this.access.canAccess(req.actor, companyId))) return;
    const ownerOf = await this.ownersByKind(todo);
    const own = companyId.toLowerCase();
    for (const w of todo) {
      const owner = ownerOf.get(w.kind) as Map<string, string>;
      // strict: unknown ids and other companies' alike; free-form keys: only other companies' ids
      const wrong = w.ids.filter((id) => {
        const company = owner.get(id.toLowerCase());
        return w.strict ? company !== own : company !== undefined && company !== own;
      });
      if (wrong.length) {
        // the same text for an unknown id and another company's: no existence oracle
        throw unprocessable(
          `${w.field} must reference ${w.kind.replace('_', ' ')}s of this company (${wrong[0]} is not)`,
          'invalid_reference',
          { field: w.field },
        );
      }
    }
  }

  /** The company of each existing id, per kind: one statement per kind for all the ids of the request. */
  private async ownersByKind(todo: Array<{ kind: ReferenceKind; ids: string[] }>): Promise<Map<ReferenceKind, Map<string, string>>> {
    const kinds = [...new Set(todo.map((w) => w.kind))];
    const ids = (kind: ReferenceKind) => todo.filter((w) => w.kind === kind).flatMap((w) => w.ids);
    const owners = await Promise.all(kinds.map((kind) => this.refs.companiesOf(kind, ids(kind))));
    return new Map(kinds.map((kind, i) => [kind, owners[i]]));
  }

  /** The route's company: its `:companyId`, or the one the guard resolved from the records its path names. */
  private async routeCompany(req: RequestWithActor & { params?: unknown; routeOptions?: { url?: string } }): Promise<string | null> {
    if (req.routeCompanyId) return req.routeCompanyId;
    const params = (req.params ?? {}) as Record<string, string>;
    if (isUuid(params.companyId)) return params.companyId;
    const found = await this.routes.resolve(params, req.routeOptions?.url);
    return found?.companyId ?? null;
  }
}

function uuids(v: unknown): string[] {
  if (typeof v === 'string') return isUuid(v) ? [v] : [];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string' && isUuid(x));
  return [];
}
