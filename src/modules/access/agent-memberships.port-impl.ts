import { Injectable, OnModuleInit } from '@nestjs/common';
import { AgentMemberships } from '../agents/agent-memberships.port';
import { AgentMembershipsRepository } from './agent-memberships.repository';

/** Registers access's statements on agents' memberships and grants with the agents module's port. */
@Injectable()
export class AgentMembershipsRegistration implements OnModuleInit {
  constructor(
    private readonly port: AgentMemberships,
    private readonly repo: AgentMembershipsRepository,
  ) {}

  onModuleInit(): void {
    this.port.register(this.repo);
  }
}
