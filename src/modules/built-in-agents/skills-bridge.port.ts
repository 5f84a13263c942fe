import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';

/**
 * The hook through which the built-in agents reach the skills module (installed for the
 * reflection coach's catalog skill, and for applying approved skill suggestions). Until the
 * skills module registers one (skills/skills-bridge.port-impl.ts), provisioning reports the skill
 * as pending and skill suggestions answer 412 `skills_unavailable`.
 */
export interface SkillsBridge {
  /** Installs (or keeps) the catalog skill `slug` in the company; `reset` restores its shipped files. */
  installCatalogSkill(companyId: string, slug: string, opts: { reset: boolean }): Promise<{ skillId: string; key: string; action: string }>;
  /** A company skill by id, key or unique slug, or null. */
  findSkill(companyId: string, ref: string): Promise<{ id: string; key: string; slug: string } | null>;
  /** Replaces the given files of a company skill (an approved suggestion), as `actor`. */
  applySkillFiles(companyId: string, skillId: string, files: Array<{ path: string; content: string }>, actor: Actor): Promise<void>;
}

/** The port the built-in agents reach the skills module through (the skills module imports this one). */
@Injectable()
export class SkillsBridgePort {
  #bridge: SkillsBridge | undefined;

  register(bridge: SkillsBridge): void {
    this.#bridge = bridge;
  }

  /** The skills module's bridge, or undefined before it registered. */
  get bridge(): SkillsBridge | undefined {
    return this.#bridge;
  }
}
