import { Injectable } from '@nestjs/common';

/**
 * Resolves `desiredSkills` references (id, key, unique slug) of a create or hire to canonical
 * keys, failing with `Invalid company skill selection (...)`.
 */
export interface DesiredSkillResolver {
  resolve(companyId: string, refs: string[]): Promise<string[]>;
}

/**
 * The skills module's resolver of desired skills: skills imports agents and registers it at
 * start-up; until then references are kept as given.
 */
@Injectable()
export class DesiredSkills {
  #resolver: DesiredSkillResolver | undefined;

  register(resolver: DesiredSkillResolver): void {
    this.#resolver = resolver;
  }

  /** desiredSkills of a create/hire as persisted: canonical keys once the skills module registered. */
  async resolve(companyId: string, refs: string[] | undefined): Promise<string[] | undefined> {
    if (refs === undefined || !this.#resolver) return refs;
    return this.#resolver.resolve(companyId, refs);
  }
}
