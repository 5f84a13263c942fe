import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../../common/auth/authorize.decorator';
import { AppConfig } from '../../config/app-config';
import { VERSION } from '../../version';
import { frontPageHtml } from './front-page';

/**
 * `GET /`: a small HTML page for whoever opens the service in a browser (what this is, the API
 * reference, the docs, health, how to point a board UI at it). Outside the API: no `/api` prefix,
 * not in the OpenAPI document.
 */
@ApiExcludeController()
@Controller()
export class FrontPageController {
  constructor(private readonly config: AppConfig) {}

  @Get()
  @Public()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
  @Header('X-Content-Type-Options', 'nosniff')
  page(): string {
    return frontPageHtml({ version: VERSION, deploymentMode: this.config.deploymentMode, publicUrl: this.config.publicUrl });
  }
}
