import { Controller, Get, Header, Param } from '@nestjs/common';
import { ApiProduces, ApiTags } from '@nestjs/swagger';
import { Public } from '../../common/auth/authorize.decorator';
import { notFound } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import { LlmsService } from './llms.service';

/** Plain-text documents for language models, generated from the adapter registry. Public. */
@ApiTags('llms')
@Controller('llms')
export class LlmsController {
  constructor(
    private readonly llms: LlmsService,
    private readonly config: AppConfig,
  ) {}

  /** Every adapter type with its adapterConfig fields, and how to create an agent. */
  @Get('agent-configuration.txt')
  @Public()
  @Header('Content-Type', 'text/plain; charset=utf-8')
  @ApiProduces('text/plain')
  agentConfiguration(): string {
    return this.llms.agentConfiguration(this.config.publicUrl);
  }

  /** One adapter type; unknown type 404. */
  @Get('agent-configuration/:file')
  @Public()
  @Header('Content-Type', 'text/plain; charset=utf-8')
  @ApiProduces('text/plain')
  adapterConfiguration(@Param('file') file: string): string {
    const type = file.endsWith('.txt') ? file.slice(0, -4) : file;
    if (!file.endsWith('.txt') || !this.llms.has(type)) throw notFound('Adapter type');
    return this.llms.adapterConfiguration(type, this.config.publicUrl);
  }

  /** Icon names for `metadata.icon`. */
  @Get('agent-icons.txt')
  @Public()
  @Header('Content-Type', 'text/plain; charset=utf-8')
  @ApiProduces('text/plain')
  agentIcons(): string {
    return this.llms.agentIcons();
  }
}
