import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ARTIFACT_ERRORS } from './artifacts.errors';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { CreateWorkProductDto, UpdateWorkProductDto, WorkProductResponseDto } from './dto/work-product.dto';
import { WorkProductsService } from './work-products.service';

@ApiTags('work products')
@ApiDomainErrors(ARTIFACT_ERRORS)
@Controller('issues/:issueId/work-products')
export class WorkProductsController {
  constructor(private readonly workProducts: WorkProductsService) {}

  /** Work products of the issue, oldest first. */
  @Get()
  @Authorize({ callers: ['board', 'agent'] })
  list(@RouteCompany() routeCompanyId: string | undefined, @Param('issueId') issueId: string): Promise<WorkProductResponseDto[]> {
    return this.workProducts.list(routeCompanyId, issueId);
  }

  @Get(':workProductId')
  @Authorize({ callers: ['board', 'agent'] })
  get(
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('workProductId') id: string,
  ): Promise<WorkProductResponseDto> {
    return this.workProducts.get(routeCompanyId, issueId, id);
  }

  /** `type`, `title`, and a `url` and/or an `attachmentId` of the same issue. */
  @Post()
  @NoActivity("the service records issue.work_product_created with the issue's company")
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  create(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Body() dto: CreateWorkProductDto,
  ): Promise<WorkProductResponseDto> {
    return this.workProducts.create(actor, routeCompanyId, issueId, dto);
  }

  /** Partial update. */
  @Patch(':workProductId')
  @NoActivity("the service records issue.work_product_updated with the issue's company")
  @Authorize({ callers: ['board', 'agent'] })
  update(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('workProductId') id: string,
    @Body() dto: UpdateWorkProductDto,
  ): Promise<WorkProductResponseDto> {
    return this.workProducts.update(actor, routeCompanyId, issueId, id, dto);
  }

  @Delete(':workProductId')
  @NoActivity("the service records issue.work_product_deleted with the issue's company")
  @Authorize({ callers: ['board', 'agent'] })
  remove(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('workProductId') id: string,
  ): Promise<WorkProductResponseDto> {
    return this.workProducts.remove(actor, routeCompanyId, issueId, id);
  }
}
