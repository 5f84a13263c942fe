import { Module } from '@nestjs/common';
import { ProjectsController } from './projects.controller';
import { ProjectsService } from './projects.service';
import { RuntimeServicesService } from './runtime-services.service';
import { RuntimeSupervisor } from './runtime-supervisor.service';
import { WorkspacesController } from './workspaces.controller';
import { WorkspacesService } from './workspaces.service';
import { SecretsModule } from '../secrets/secrets.module';

@Module({
  imports: [SecretsModule],
  controllers: [ProjectsController, WorkspacesController],
  providers: [ProjectsService, WorkspacesService, RuntimeSupervisor, RuntimeServicesService],
  exports: [ProjectsService, WorkspacesService],
})
export class ProjectsModule {}
