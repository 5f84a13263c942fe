import { Injectable, OnModuleInit } from '@nestjs/common';
import { SkillsBridgePort } from '../built-in-agents/skills-bridge.port';
import { CATALOG_KEY_PREFIX } from './skill-catalog.service';
import { skillError } from './skills.errors';
import { isLocallyModified, SkillsService } from './skills.service';

/** The built-in agents: the reflection coach's catalog skill, and approved skill suggestions. */
@Injectable()
export class BuiltInSkillsBridge implements OnModuleInit {
  constructor(
    private readonly bridge: SkillsBridgePort,
    private readonly skills: SkillsService,
  ) {}

  onModuleInit(): void {
    this.bridge.register({
      installCatalogSkill: async (companyId, slug, { reset }) => {
        try {
          const r = await this.skills.installCatalogSkill(companyId, slug, { force: reset });
          return { skillId: r.skill.id, key: r.skill.key, action: r.action };
        } catch (err) {
          // a locally edited copy is kept unless a reset asked for the shipped files
          const kept =
            (err as { code?: string }).code === 'skill_locally_modified'
              ? await this.skills.findSkill(companyId, `${CATALOG_KEY_PREFIX}/${slug}`)
              : null;
          if (kept && isLocallyModified(kept)) return { skillId: kept.id, key: kept.key, action: 'kept' };
          throw err;
        }
      },
      findSkill: async (companyId, ref) => {
        const s = await this.skills.findSkill(companyId, ref);
        return s ? { id: s.id, key: s.key, slug: s.slug } : null;
      },
      applySkillFiles: async (companyId, skillId, files) => {
        if (!files.length) throw skillError('invalid_skill_path', 'No files to apply');
        await this.skills.writeFiles(companyId, skillId, files);
      },
    });
  }
}
