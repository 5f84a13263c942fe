import { Module } from '@nestjs/common';
import { ToolsModule } from '../tools/tools.module';
import { McpController } from './mcp.controller';
import { McpRouteCaller } from './mcp-route-caller';
import { McpService } from './mcp.service';

/** The service as an MCP server (`/api/mcp`): its own API as tools, and the company's tool connections through the gateway. */
@Module({
  imports: [ToolsModule],
  controllers: [McpController],
  providers: [McpService, McpRouteCaller],
})
export class McpModule {}
