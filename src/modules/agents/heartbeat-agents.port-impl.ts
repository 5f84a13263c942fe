import { Injectable, OnModuleInit } from '@nestjs/common';
import { HeartbeatAgents } from '../heartbeat/heartbeat-agents.port';
import { AgentEngineRepository } from './agent-engine.repository';

/** The heartbeat engine's statements on the agents table (its lock, status flips, timer claims), owned here. */
@Injectable()
export class HeartbeatAgentsRegistration implements OnModuleInit {
  constructor(
    private readonly heartbeatAgents: HeartbeatAgents,
    private readonly engineStatements: AgentEngineRepository,
  ) {}

  onModuleInit(): void {
    this.heartbeatAgents.register(this.engineStatements);
  }
}
