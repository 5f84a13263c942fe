import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { DOCUMENT_ERRORS } from './documents.errors';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { DocumentsService } from './documents.service';
import { DocumentResponseDto, GetDocumentQueryDto, PutDocumentDto, RevisionResponseDto } from './dto/document.dto';

@ApiTags('issue documents')
@ApiDomainErrors(DOCUMENT_ERRORS)
@Controller('issues/:issueId/documents')
export class DocumentsController {
  constructor(private readonly documents: DocumentsService) {}

  /** All documents of the issue with their latest body. */
  @Get()
  @Authorize({ callers: ['board', 'agent'] })
  list(@RouteCompany() routeCompanyId: string | undefined, @Param('issueId') issueId: string): Promise<DocumentResponseDto[]> {
    return this.documents.list(routeCompanyId, issueId);
  }

  /** Latest revision; agents get annotation threads unless `includeAnnotations=false`. */
  @Get(':key')
  @Authorize({ callers: ['board', 'agent'] })
  get(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('key') key: string,
    @Query() q: GetDocumentQueryDto,
  ): Promise<DocumentResponseDto> {
    return this.documents.get(actor, routeCompanyId, issueId, key, q);
  }

  /**
   * Create (no baseRevisionId, 201) or append a revision (baseRevisionId = latest, 200). Stale or missing
   * base: 409 with currentRevisionId. Locked: 409 for users; agents are redirected to a derived key.
   */
  @Put(':key')
  @NoActivity(
    "the service records issue.document_created or issue.document_updated (only it knows whether the key existed) with the issue's company",
  )
  @Authorize({ callers: ['board', 'agent'] })
  async put(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('key') key: string,
    @Body() dto: PutDocumentDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DocumentResponseDto> {
    const r = await this.documents.put(actor, routeCompanyId, issueId, key, dto);
    res.status(r.created ? 201 : 200);
    return r.document;
  }

  /** Sets lockedAt/lockedByAgentId/lockedByUserId; locking a locked document is a no-op. */
  @Post(':key/lock')
  @NoActivity("the service records issue.document_locked with the issue's company")
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  lock(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('key') key: string,
  ): Promise<DocumentResponseDto> {
    return this.documents.lock(actor, routeCompanyId, issueId, key);
  }

  /** Board: any lock; agents: only their own. */
  @Post(':key/unlock')
  @NoActivity("the service records issue.document_unlocked with the issue's company")
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  unlock(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('key') key: string,
  ): Promise<DocumentResponseDto> {
    return this.documents.unlock(actor, routeCompanyId, issueId, key);
  }

  /** Immutable revisions, newest first. */
  @Get(':key/revisions')
  @Authorize({ callers: ['board', 'agent'] })
  revisions(
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('key') key: string,
  ): Promise<RevisionResponseDto[]> {
    return this.documents.revisions(routeCompanyId, issueId, key);
  }

  /** A new latest revision with the old revision's content; history kept. Locked: 409. */
  @Post(':key/revisions/:revisionId/restore')
  @NoActivity("the service records issue.document_restored with the issue's company")
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  restore(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('key') key: string,
    @Param('revisionId') revisionId: string,
  ): Promise<DocumentResponseDto> {
    return this.documents.restore(actor, routeCompanyId, issueId, key, revisionId);
  }

  /** Board only; removes all revisions and threads; locked: 409. */
  @Delete(':key')
  @NoActivity("the service records issue.document_deleted with the issue's company")
  @Authorize({ callers: ['board'] })
  remove(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('key') key: string,
  ): Promise<DocumentResponseDto> {
    return this.documents.remove(actor, routeCompanyId, issueId, key);
  }
}
