import { Injectable, OnModuleInit } from '@nestjs/common';
import { LaunchContributors } from '../heartbeat/launch-contributors.port';
import { ToolRunServers } from './tool-run-servers';

/** Every run's CLI configuration gets the company's local tool connections as MCP servers. */
@Injectable()
export class ToolLaunchContribution implements OnModuleInit {
  constructor(
    private readonly contributors: LaunchContributors,
    private readonly servers: ToolRunServers,
  ) {}

  onModuleInit(): void {
    this.contributors.add((ctx) => this.servers.forRun(ctx));
  }
}
