import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import { Authorize } from '../../common/auth/authorize.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { AssetsService } from './assets.service';

@ApiTags('assets')
@Controller('assets')
export class AssetsController {
  constructor(private readonly assets: AssetsService) {}

  /** The bytes of a company asset (e.g. a logo). SVGs are served with a sandboxing CSP. */
  @Get(':assetId/content')
  @Authorize({ callers: ['board', 'agent'] })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ description: 'asset bytes' })
  async content(@RouteCompany() companyId: string | undefined, @Param('assetId') assetId: string, @Res() res: Response): Promise<void> {
    const asset = await this.assets.getInRoute(companyId, assetId);
    res.header('Content-Type', asset.contentType);
    res.header('Content-Length', String(asset.byteSize));
    res.header('X-Content-Type-Options', 'nosniff');
    res.header('Cache-Control', 'private, max-age=300');
    if (asset.contentType === 'image/svg+xml') {
      res.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
    }
    await res.send(this.assets.read(asset));
  }
}
