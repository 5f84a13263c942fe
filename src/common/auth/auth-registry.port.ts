import { Injectable } from '@nestjs/common';
import type { FastifyRequest as Request } from 'fastify';
import type { Actor, AgentActor, BoardActor } from './actor';

/**
 * Turns a bearer token (or, for sessions, a cookie) into an actor. Returns null when the
 * credential is not of its kind; throws 401 when it is of its kind but invalid.
 */
export interface CredentialResolver {
  readonly name: string;
  resolve(token: string | undefined, req: Request): Promise<Actor | null>;
}

/** Answers whether a heartbeat run is live (queued or running) and belongs to the agent. */
export interface RunVerifier {
  isLiveRun(companyId: string, runId: string, agentId: string): Promise<boolean>;
}

/** Decides whether a board user may reach a company (active membership, instance admin). */
export interface CompanyMembershipChecker {
  canAccessCompany(actor: BoardActor, companyId: string): Promise<boolean>;
  /** ids of the companies a board user can access; undefined = all */
  accessibleCompanyIds(actor: BoardActor): Promise<string[] | undefined>;
  /** makes a signed-in user who creates a company its owner */
  addCreator?(actor: BoardActor, companyId: string): Promise<void>;
}

/**
 * The company of a route without `:companyId`, from the records its path parameters name
 * (common/references registers it): undefined when the path names none; `companyId` null when a
 * named record is unknown (or they belong to different companies), with the label of its kind.
 */
export interface RouteRecords {
  resolve(
    params: Record<string, string>,
    routeUrl: string | undefined,
  ): Promise<{ companyId: string | null; label: string; within?: { companyId: string; label: string } } | undefined>;
}

/**
 * The seams between the foundation's guard and the domains that own credentials, each filled at
 * start-up by the owner's `auth-registry.port-impl.ts`: agents add API keys, heartbeat run tokens
 * and live runs, users sessions and board tokens, access memberships; common/references the
 * company of a route's records.
 */
@Injectable()
export class AuthRegistry {
  readonly resolvers: CredentialResolver[] = [];
  runVerifier?: RunVerifier;
  membershipChecker?: CompanyMembershipChecker;
  routeRecords?: RouteRecords;

  addResolver(resolver: CredentialResolver): void {
    if (!this.resolvers.some((r) => r.name === resolver.name)) this.resolvers.push(resolver);
  }

  async isLiveRun(actor: AgentActor, runId: string): Promise<boolean> {
    if (!this.runVerifier) return false;
    return this.runVerifier.isLiveRun(actor.companyId, runId, actor.agentId);
  }
}
