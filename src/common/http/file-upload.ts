import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import multer from 'multer';
import { Observable } from 'rxjs';
import { AppConfig } from '../../config/app-config';
import { badRequest } from '../errors/domain-error';

export type UploadedFile = Express.Multer.File;

/**
 * Parses a multipart body holding exactly one part named `file` into memory, within the
 * configured size limit. More than one file, another file field, or no file at all: 400.
 */
@Injectable()
export class SingleFileUploadInterceptor implements NestInterceptor {
  private readonly upload: ReturnType<ReturnType<typeof multer>['single']>;

  constructor(config: AppConfig) {
    this.upload = multer({
      storage: multer.memoryStorage(),
      limits: { fileSize: config.maxUploadBytes, files: 1, fields: 20, parts: 22 },
    }).single('file');
  }

  async intercept(ctx: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = ctx.switchToHttp().getRequest<Request>();
    const res = ctx.switchToHttp().getResponse<Response>();
    if (!req.is('multipart/form-data')) throw badRequest('Expected a multipart/form-data body with one `file` part', {}, 'invalid_upload');
    await new Promise<void>((resolve, reject) => this.upload(req, res, (err: unknown) => (err ? reject(err) : resolve())));
    const file = (req as Request & { file?: UploadedFile }).file;
    if (!file) throw badRequest('A `file` part is required', { field: 'file' }, 'invalid_upload');
    if (file.size === 0) throw badRequest('The file is empty', { field: 'file' }, 'empty_file');
    return next.handle();
  }
}

/** Does a content type match an allowed list of MIME types and `type/*` patterns? */
export function contentTypeAllowed(contentType: string, allowed: string[]): boolean {
  const ct = contentType.split(';')[0].trim().toLowerCase();
  return allowed.some((p) => p === '*/*' || p === ct || (p.endsWith('/*') && ct.startsWith(p.slice(0, -1))));
}
