import { Injectable, OnModuleInit } from '@nestjs/common';
import { InviteSkills } from '../access/invite-skills.port';
import { SkillCatalogService } from './skill-catalog.service';

/** Invite onboarding offers the bundled skills (the agent protocol) beside its own. */
@Injectable()
export class InviteBundledSkills implements OnModuleInit {
  constructor(
    private readonly inviteSkills: InviteSkills,
    private readonly catalog: SkillCatalogService,
  ) {}

  onModuleInit(): void {
    this.inviteSkills.register(() =>
      this.catalog.bundled().map((c) => ({
        name: c.slug,
        description: c.description ?? '',
        markdown: c.storedFiles.find((f) => f.path === 'SKILL.md')?.content ?? '',
      })),
    );
  }
}
