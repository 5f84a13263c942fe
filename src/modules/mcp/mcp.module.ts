import { Module } from '@nestjs/common';
import { AuthorizationModule } from '../authorization/authorization.module';
import { ToolsModule } from '../tools/tools.module';
import { McpController } from './mcp.controller';
import { McpRouteCaller } from './mcp-route-caller';
import { McpToolAuthority } from './mcp-tool-authority';
import { McpService } from './mcp.service';

/** The service as an MCP server (`/api/mcp`): its own API as tools, and the company's tool connections through the gateway. */
@Module({
  imports: [ToolsModule, AuthorizationModule],
  controllers: [McpController],
  providers: [McpService, McpRouteCaller, McpToolAuthority],
})
export class McpModule {}
