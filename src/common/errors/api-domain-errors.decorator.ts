import { applyDecorators } from '@nestjs/common';
import { ApiExtension, ApiResponse } from '@nestjs/swagger';
import type { ErrorTable } from './error-codes';

/**
 * Documents the domain error codes the routes of a controller may answer (from the domain's error
 * tables): one response per status naming its codes, and `x-error-codes` (`{ code: status }`) on
 * each operation. Validation (400 `validation_failed`), access (401, 403) and `not_found` come on top.
 */
export function ApiDomainErrors(...tables: ErrorTable[]): ClassDecorator & MethodDecorator {
  const codes: Record<string, number> = Object.assign({}, ...tables);
  const byStatus = new Map<number, string[]>();
  for (const [code, status] of Object.entries(codes)) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  return applyDecorators(
    ApiExtension('x-error-codes', codes),
    ...[...byStatus].map(([status, list]) =>
      ApiResponse({
        status,
        description: `${status === 400 ? 'Invalid input (validation failures name the fields), or error' : 'Error'} \`{ error, code, … }\` with code ${list
          .map((c) => `\`${c}\``)
          .join(', ')}`,
      }),
    ),
  ) as ClassDecorator & MethodDecorator;
}
