import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { DOCUMENT_ERRORS } from './documents.errors';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { AnnotationsService } from './annotations.service';
import { DocumentsService } from './documents.service';
import {
  AnnotationCommentDto,
  AnnotationCommentResponseDto,
  AnnotationThreadResponseDto,
  CreateAnnotationThreadDto,
  ListAnnotationsQueryDto,
  UpdateAnnotationThreadDto,
} from './dto/annotation.dto';

@ApiTags('issue documents')
@ApiDomainErrors(DOCUMENT_ERRORS)
@Controller('issues/:issueId/documents/:key/annotations')
export class AnnotationsController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly annotations: AnnotationsService,
  ) {}

  /** `status` open|resolved|all (default all), `includeComments`; newest activity first. */
  @Get()
  @Authorize({ callers: ['board', 'agent'] })
  async list(
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('key') key: string,
    @Query() q: ListAnnotationsQueryDto,
  ): Promise<AnnotationThreadResponseDto[]> {
    const { doc } = await this.documents.load(routeCompanyId, issueId, key);
    return this.annotations.threadsOf(doc, q);
  }

  /** Thread with its comments; 404 when not a thread of that document. */
  @Get(':threadId')
  @Authorize({ callers: ['board', 'agent'] })
  async get(
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('key') key: string,
    @Param('threadId') threadId: string,
  ): Promise<AnnotationThreadResponseDto> {
    const { doc } = await this.documents.load(routeCompanyId, issueId, key);
    return this.annotations.get(doc, threadId);
  }

  /** Anchored to the latest revision (stale: 409; selector not matching the text: 422); wakes the assignee. */
  @Post()
  @NoActivity("the service records the thread's creation with the issue's company")
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  async create(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('key') key: string,
    @Body() dto: CreateAnnotationThreadDto,
  ): Promise<AnnotationThreadResponseDto> {
    const { issue, doc } = await this.documents.load(routeCompanyId, issueId, key, { lock: true });
    return this.annotations.create(actor, issue, doc, (await this.documents.revision(doc))!, dto);
  }

  /** Reply; bumps the thread's activity time and wakes the assignee. */
  @Post(':threadId/comments')
  @NoActivity("the service records the reply with the issue's company")
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  async reply(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('key') key: string,
    @Param('threadId') threadId: string,
    @Body() dto: AnnotationCommentDto,
  ): Promise<AnnotationCommentResponseDto> {
    const { issue, doc } = await this.documents.load(routeCompanyId, issueId, key);
    return this.annotations.reply(actor, issue, doc, threadId, dto.body);
  }

  /** `{ status: open | resolved }`; same status is a no-op. */
  @Patch(':threadId')
  @NoActivity("the service records the status change (resolved or reopened) with the issue's company")
  @Authorize({ callers: ['board', 'agent'] })
  async update(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('key') key: string,
    @Param('threadId') threadId: string,
    @Body() dto: UpdateAnnotationThreadDto,
  ): Promise<AnnotationThreadResponseDto> {
    const { issue, doc } = await this.documents.load(routeCompanyId, issueId, key);
    return this.annotations.setStatus(actor, issue, doc, threadId, dto.status);
  }
}
