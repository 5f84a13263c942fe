import { Injectable } from '@nestjs/common';

/** A skill an invite offers at /invites/{token}/skills. */
export interface InviteSkill {
  name: string;
  description: string;
  markdown: string;
}

/**
 * Skills an invite offers beyond the onboarding ones: the skills module (which imports access)
 * registers the bundled catalog skills at start-up; until then there are none.
 */
@Injectable()
export class InviteSkills {
  #list: (() => InviteSkill[]) | undefined;

  register(list: () => InviteSkill[]): void {
    this.#list = list;
  }

  /** The registered list, or undefined before the skills module registered one. */
  get list(): (() => InviteSkill[]) | undefined {
    return this.#list;
  }
}
