import { CallHandler, createParamDecorator, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../errors/domain-error';
import { uploadError } from './upload.errors';

/** A file read from a multipart body into memory. */
export interface UploadedFile {
  fieldname: string;
  originalname: string;
  mimetype: string;
  size: number;
  buffer: Buffer;
}

type UploadRequest = FastifyRequest & { uploadedFile?: UploadedFile };

const invalidUpload = (message: string) => uploadError('invalid_upload', `Invalid upload: ${message}`);

/** The multipart reader's errors (@fastify/multipart, busboy) as our answers. */
function fromMultipartError(err: unknown): unknown {
  if (err instanceof DomainError) return err;
  const e = err as { code?: string; message?: string };
  if (e?.code === 'FST_REQ_FILE_TOO_LARGE') return uploadError('file_too_large', 'File too large');
  if (e?.code === 'FST_FILES_LIMIT') return invalidUpload('only one file may be sent');
  if (e?.code === 'FST_PARTS_LIMIT' || e?.code === 'FST_FIELDS_LIMIT') return invalidUpload('too many fields');
  return invalidUpload(e?.message ?? 'malformed multipart body');
}

/**
 * Parses a multipart body holding exactly one part named `file` into memory, within the
 * configured size limit; text fields become the request body (for the route's DTO). More than one
 * file, another file field, or no file at all: 400. Read the file with `@UploadedFile()`.
 */
@Injectable()
export class SingleFileUploadInterceptor implements NestInterceptor {
  constructor(private readonly config: AppConfig) {}

  async intercept(ctx: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = ctx.switchToHttp().getRequest<UploadRequest>();
    if (!req.isMultipart()) throw uploadError('invalid_upload', 'Expected a multipart/form-data body with one `file` part');
    const fields: Record<string, string> = {};
    let file: UploadedFile | undefined;
    try {
      const limits = { fileSize: this.config.maxUploadBytes, files: 1, fields: 20, parts: 22 };
      for await (const part of req.parts({ limits })) {
        if (part.type === 'field') {
          fields[part.fieldname] = String(part.value);
          continue;
        }
        if (part.fieldname !== 'file') throw invalidUpload(`unexpected file field \`${part.fieldname}\``);
        const buffer = await part.toBuffer();
        file = { fieldname: part.fieldname, originalname: part.filename, mimetype: part.mimetype, size: buffer.length, buffer };
      }
    } catch (err) {
      throw fromMultipartError(err);
    }
    if (!file) throw uploadError('invalid_upload', 'A `file` part is required', { field: 'file' });
    if (file.size === 0) throw uploadError('empty_file', 'The file is empty', { field: 'file' });
    req.body = fields;
    req.uploadedFile = file;
    return next.handle();
  }
}

/** The file SingleFileUploadInterceptor read. */
export const UploadedFile = createParamDecorator(
  (_: unknown, ctx: ExecutionContext) => ctx.switchToHttp().getRequest<UploadRequest>().uploadedFile,
);

/** Does a content type match an allowed list of MIME types and `type/*` patterns? */
export function contentTypeAllowed(contentType: string, allowed: string[]): boolean {
  const ct = contentType.split(';')[0].trim().toLowerCase();
  return allowed.some((p) => p === '*/*' || p === ct || (p.endsWith('/*') && ct.startsWith(p.slice(0, -1))));
}
