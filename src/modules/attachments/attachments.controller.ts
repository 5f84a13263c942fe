import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ATTACHMENT_ERRORS } from './attachments.errors';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query, Res, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { SingleFileUploadInterceptor, UploadedFile, type UploadedFile as UploadedFileType } from '../../common/http/file-upload';
import { StorageService } from '../storage/storage.service';
import { AttachmentRecord, effectiveContentType, isInlineCapable } from './attachment.types';
import { AttachmentsService } from './attachments.service';
import { AttachmentResponseDto, UploadAttachmentDto } from './dto/attachment.dto';
import { contentDisposition, parseRange } from './http-range';

/** Served SVGs cannot run scripts or load anything: a sandboxing content security policy. */
const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

@ApiTags('attachments')
@ApiDomainErrors(ATTACHMENT_ERRORS)
@Controller()
export class AttachmentsController {
  constructor(
    private readonly attachments: AttachmentsService,
    private readonly storage: StorageService,
  ) {}

  /** Multipart: one non-empty `file` (size limit, allowed types), optional `issueCommentId` of the same issue. */
  @Post('companies/:companyId/issues/:issueId/attachments')
  @NoActivity('the service records issue.attachment_added once the file is stored')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @UseInterceptors(SingleFileUploadInterceptor)
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['file'],
      properties: { file: { type: 'string', format: 'binary' }, issueCommentId: { type: 'string', format: 'uuid' } },
    },
  })
  upload(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('issueId') issueId: string,
    @UploadedFile() file: UploadedFileType,
    @Body() dto: UploadAttachmentDto,
  ): Promise<AttachmentResponseDto> {
    return this.attachments.upload(actor, companyId, issueId, file, dto.issueCommentId);
  }

  /** Attachments of the issue, oldest first, with contentPath, openPath and downloadPath. */
  @Get('issues/:issueId/attachments')
  @Authorize({ callers: ['board', 'agent'] })
  list(@RouteCompany() routeCompanyId: string | undefined, @Param('issueId') issueId: string): Promise<AttachmentResponseDto[]> {
    return this.attachments.list(routeCompanyId, issueId);
  }

  /** The bytes; `Range` (206/416); inline for images, PDF, video, audio and plain text unless `download=1`. */
  @Get('attachments/:attachmentId/content')
  @Authorize({ callers: ['board', 'agent'] })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ description: 'attachment bytes' })
  async content(
    @RouteCompany() companyId: string | undefined,
    @Param('attachmentId') attachmentId: string,
    @Query('download') download: string | undefined,
    @Headers('range') range: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const a = await this.attachments.load(companyId, attachmentId);
    this.setHeaders(res, a, download === '1' || download === 'true');
    const size = a.byteSize;
    const r = parseRange(range, size);
    if (r.kind === 'unsatisfiable') {
      res.status(416).header('Content-Range', `bytes */${size}`).header('Content-Type', 'application/json; charset=utf-8');
      res.removeHeader('Content-Disposition');
      await res.send({ error: 'Range not satisfiable', code: 'range_not_satisfiable', size });
      return;
    }
    const stream = this.storage.read(a.storageKey, r.kind === 'partial' ? r : undefined);
    if (r.kind === 'partial') {
      res
        .status(206)
        .header('Content-Range', `bytes ${r.start}-${r.end}/${size}`)
        .header('Content-Length', String(r.end - r.start + 1));
    } else {
      res.status(200).header('Content-Length', String(size));
    }
    await res.send(stream);
  }

  /** Board callers or the uploader. */
  @Delete('attachments/:attachmentId')
  @NoActivity("the service records issue.attachment_removed with the attachment's company")
  @Authorize({ callers: ['board', 'agent'] })
  remove(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('attachmentId') attachmentId: string,
  ): Promise<AttachmentResponseDto> {
    return this.attachments.remove(actor, companyId, attachmentId);
  }

  private setHeaders(res: Response, a: AttachmentRecord, download: boolean): void {
    const type = effectiveContentType(a.contentType, a.originalFilename);
    res.header('Content-Type', type);
    res.header('Accept-Ranges', 'bytes');
    res.header('X-Content-Type-Options', 'nosniff');
    res.header('Cache-Control', 'private, max-age=300');
    res.header('ETag', `"${a.sha256}"`);
    res.header('Content-Disposition', contentDisposition(!download && isInlineCapable(type) ? 'inline' : 'attachment', a.originalFilename));
    if (type.split(';')[0].trim().toLowerCase() === 'image/svg+xml') res.header('Content-Security-Policy', SVG_CSP);
  }
}
