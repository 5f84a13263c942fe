import { assertInstanceAdmin } from '../../common/auth/instance-admin';
import { InstanceAudit } from '../../common/activity/log-activity.decorator';
import { Controller, Delete, Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { conflict, notFound } from '../../common/errors/domain-error';
import { AdapterExecutors } from '../heartbeat/adapters/adapter-executors';
import { AdapterRegistry, AdapterTypeDefinition } from './adapter-registry.service';
import { AdapterTypeDto } from './dto/adapter.dto';


const toDto = (d: AdapterTypeDefinition, executable: boolean): AdapterTypeDto => ({
  type: d.type,
  label: d.label,
  builtIn: d.builtIn,
  executable,
  configSchema: d.configSchema as unknown as Record<string, unknown>,
});

/** The adapter registry: built-in types and externally registered ones. */
@ApiTags('adapters')
@Controller('adapters')
export class AdaptersController {
  constructor(
    private readonly registry: AdapterRegistry,
    private readonly executors: AdapterExecutors,
  ) {}

  /** Every adapter type an agent may use, with its configuration schema. */
  @Get()
  @Authorize({ callers: ['board'] })
  list(): AdapterTypeDto[] {
    return this.registry.list().map((d) => toDto(d, !!this.executors.get(d.type)));
  }

  /** JSON schema of the type's settings (for a settings form). */
  @Get(':type/config-schema')
  @Authorize({ callers: ['board'] })
  configSchema(@Param('type') type: string): Record<string, unknown> {
    const d = this.registry.get(type);
    if (!d) throw notFound('Adapter type');
    return d.configSchema as unknown as Record<string, unknown>;
  }

  /** Removes an external adapter type (instance admins); built-in types cannot be deleted (409). */
  @Delete(':type')
  @InstanceAudit('instance.adapter_removed')
  @Authorize({ callers: ['board'] })
  remove(@CurrentActor() actor: Actor, @Param('type') type: string): AdapterTypeDto {
    assertInstanceAdmin(actor);
    const d = this.registry.get(type);
    if (!d) throw notFound('Adapter type');
    if (d.builtIn) throw conflict(`Built-in adapter type ${type} cannot be deleted`, 'adapter_builtin');
    this.registry.unregister(type);
    return toDto(d, !!this.executors.get(type));
  }
}
