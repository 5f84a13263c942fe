import * as fs from 'node:fs';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { Db } from '../../database/db.service';
import { iso, isoRequired } from '../../database/row-mapping';
import { RuntimeOperationResponseDto, RuntimeServiceResultDto } from './dto/workspace.dto';
import { ProjectWorkspaceEntity } from './project-workspace.entity';
import { RuntimeAction, RuntimeServiceOperationEntity } from './runtime-service-operation.entity';
import { projectError } from './projects.errors';
import { RuntimeOperationsRepository } from './runtime-services.repository';
import { RuntimeSupervisor } from './runtime-supervisor.service';
import { WorkspacesRepository } from './workspaces.repository';
import { LockedProject, toWorkspaceResponse, WorkspacesService } from './workspaces.service';

export const RUNTIME_ACTIONS = ['start', 'stop', 'restart'] as const;

export function toOperationResponse(o: RuntimeServiceOperationEntity): RuntimeOperationResponseDto {
  return {
    id: o.id,
    workspaceId: o.workspaceId,
    action: o.action,
    status: o.status,
    pid: o.pid,
    instanceId: o.instanceId,
    startedAt: isoRequired(o.startedAt),
    finishedAt: iso(o.finishedAt),
    logPath: o.logPath,
    error: o.error,
  };
}

/**
 * start / stop / restart of a workspace's runtime service. The desired state is stored on the
 * workspace (start and restart: running, stop: stopped) and every action leaves an operation
 * record. On start-up the instance reconciles the workspaces it owns to their desired state.
 */
@Injectable()
export class RuntimeServicesService implements OnApplicationBootstrap {
  private readonly logger = new Logger('RuntimeServices');

  constructor(
    private readonly db: Db,
    private readonly workspaces: WorkspacesService,
    private readonly workspaceRows: WorkspacesRepository,
    private readonly operations: RuntimeOperationsRepository,
    private readonly supervisor: RuntimeSupervisor,
  ) {}

  async perform(actor: Actor | null, project: LockedProject, workspaceId: string, action: RuntimeAction): Promise<RuntimeServiceResultDto> {
    if (!(RUNTIME_ACTIONS as readonly string[]).includes(action))
      throw projectError('invalid_action', 'action must be start, stop or restart');
    const ws = await this.workspaces.getEntity(project.companyId, project.id, workspaceId, true);
    if (action !== 'stop') this.assertStartable(ws);
    if (ws.runtimeOwnerId && ws.runtimeOwnerId !== this.supervisor.ownerId && ws.runtimePid !== null) {
      throw projectError('runtime_owned_by_other_instance', `The runtime service is owned by instance ${ws.runtimeOwnerId}`, {
        ownerInstanceId: ws.runtimeOwnerId,
      });
    }
    const operation = await this.run(ws, action, actor);
    return {
      workspace: toWorkspaceResponse(await this.workspaces.getEntity(project.companyId, project.id, ws.id)),
      operation: toOperationResponse(operation),
    };
  }

  /** Start-up: restart what should run (a leftover process of a crashed run is stopped first), stop what should not. */
  async onApplicationBootstrap(): Promise<void> {
    const owned = await this.workspaceRows.ownedBy(this.supervisor.ownerId);
    for (const ws of owned) {
      try {
        await this.db.transaction(async () => {
          const locked = await this.workspaces.getEntity(ws.companyId, ws.projectId, ws.id, true);
          if (locked.desiredState === 'running' && locked.cwd && locked.runtimeConfig?.command) {
            await this.run(locked, 'reconcile', null);
          } else {
            if (locked.runtimePid !== null)
              await this.supervisor.stopOrphan(locked.runtimePid, locked.runtimeConfig, locked.runtimeConfig?.stopTimeoutMs);
            await this.workspaceRows.clearRuntimePid(locked.companyId, locked.id);
          }
        });
      } catch (err) {
        this.logger.error(`reconciling the runtime service of workspace ${ws.id} failed: ${(err as Error).message}`);
      }
    }
  }

  private assertStartable(ws: ProjectWorkspaceEntity): void {
    if (!ws.cwd) throw projectError('runtime_not_configured', 'Starting a runtime service needs the workspace cwd', { field: 'cwd' });
    if (!ws.runtimeConfig?.command) {
      throw projectError('runtime_not_configured', 'Starting a runtime service needs runtimeConfig.command', { field: 'runtimeConfig' });
    }
    // rows saved before the roots existed are checked again
    this.workspaces.assertCwdAllowed(ws.cwd);
    if (!fs.existsSync(ws.cwd) || !fs.statSync(ws.cwd).isDirectory()) {
      throw projectError('cwd_not_found', `The workspace cwd ${ws.cwd} is not a directory on this host`, { field: 'cwd' });
    }
  }

  private async run(ws: ProjectWorkspaceEntity, action: RuntimeAction, actor: Actor | null): Promise<RuntimeServiceOperationEntity> {
    const op = this.operations.build({
      companyId: ws.companyId,
      projectId: ws.projectId,
      workspaceId: ws.id,
      action,
      status: 'succeeded',
      pid: null,
      instanceId: this.supervisor.ownerId,
      logPath: null,
      error: null,
      requestedByActorType: actor ? (actor.kind === 'agent' ? 'agent' : 'user') : 'system',
      requestedByActorId: actor ? (actor.kind === 'agent' ? actor.agentId : actor.userId) : 'system',
      startedAt: new Date(),
      finishedAt: null,
    });
    op.id = await this.operations.newId();
    const cfg = ws.runtimeConfig;
    const current = this.supervisor.running(ws.id);

    if (action === 'stop' || action === 'restart' || action === 'reconcile') {
      const stopped = await this.supervisor.stop(ws.id, cfg?.stopTimeoutMs);
      if (!stopped && ws.runtimePid !== null && ws.runtimeOwnerId === this.supervisor.ownerId) {
        await this.supervisor.stopOrphan(ws.runtimePid, cfg, cfg?.stopTimeoutMs);
      }
    }
    if (action === 'stop') {
      op.pid = current?.pid ?? ws.runtimePid;
      Object.assign(ws, {
        desiredState: 'stopped',
        runtimePid: null,
        runtimeOwnerId: null,
        runtimeStartedAt: null,
        runtimeExitCode: null,
        runtimeExitedAt: null,
      });
    } else if (action === 'start' && current) {
      // already running here: nothing to start
      op.pid = current.pid;
      op.logPath = current.logPath;
      ws.desiredState = 'running';
    } else {
      await this.startProcess(ws, op);
    }
    op.finishedAt = new Date();
    await this.workspaceRows.save(ws);
    return this.operations.save(op);
  }

  /** Spawns and health-checks; a failure is recorded on the operation, the desired state stays `running`. */
  private async startProcess(ws: ProjectWorkspaceEntity, op: RuntimeServiceOperationEntity): Promise<void> {
    const cfg = ws.runtimeConfig!;
    ws.desiredState = 'running';
    ws.runtimeOwnerId = this.supervisor.ownerId;
    ws.runtimeExitCode = null;
    ws.runtimeExitedAt = null;
    try {
      const started = await this.supervisor.spawn(ws.id, op.id, cfg, ws.cwd!, ws.companyId);
      op.pid = started.pid;
      op.logPath = started.logPath;
      const unhealthy = await this.supervisor.waitHealthy(ws.id, cfg);
      if (unhealthy) {
        await this.supervisor.stop(ws.id, cfg.stopTimeoutMs);
        op.status = 'failed';
        op.error = unhealthy;
        ws.runtimePid = null;
        ws.runtimeStartedAt = null;
      } else {
        ws.runtimePid = started.pid;
        ws.runtimeStartedAt = new Date();
      }
    } catch (err) {
      op.status = 'failed';
      op.error = `could not start ${cfg.command}: ${(err as Error).message}`;
      ws.runtimePid = null;
      ws.runtimeStartedAt = null;
    }
  }
}
