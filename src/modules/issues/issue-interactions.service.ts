import { isoRequired } from '../../database/row-mapping';
import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { badRequest, forbidden, notFound } from '../../common/errors/domain-error';
import { issueError } from './issues.errors';
import { isUuid } from '../../common/http/uuid';
import { AnswerInteractionDto, CreateInteractionDto, InteractionDto } from './dto/issue-controls.dto';
import { InteractionRecord, IssueInteractionsRepository } from './issue-interactions.repository';
import { IssueStore } from './issue-store.service';
import { IssueWakeups } from './issue-wakeups.service';

export const toInteraction = (r: InteractionRecord): InteractionDto => ({
  id: r.id,
  companyId: r.companyId,
  issueId: r.issueId,
  kind: r.kind,
  status: r.status,
  askedByAgentId: r.askedByAgentId,
  runId: r.runId,
  prompt: r.prompt,
  options: r.options,
  allowFreeText: r.allowFreeText,
  answer:
    r.status === 'answered'
      ? {
          optionId: r.answerOptionId,
          text: r.answerText,
          answeredByUserId: r.answeredByUserId!,
          answeredAt: isoRequired(r.answeredAt!),
        }
      : null,
  createdAt: isoRequired(r.createdAt),
  updatedAt: isoRequired(r.updatedAt),
});

/**
 * Interactions: an agent asks a human a question on an issue (options to pick from, free text, or
 * both); a board user answers once; the answer wakes the asking agent with the interaction in its
 * wake payload, and the issue's heartbeat context lists the interactions with their answers.
 */
@Injectable()
export class IssueInteractions {
  constructor(
    private readonly repo: IssueInteractionsRepository,
    private readonly store: IssueStore,
    private readonly wakeups: IssueWakeups,
  ) {}

  async ask(actor: Actor, routeCompanyId: string | undefined, ref: string, dto: CreateInteractionDto): Promise<InteractionDto> {
    if (actor.kind !== 'agent') throw forbidden('Only agents ask questions through this route');
    const issue = await this.store.load(routeCompanyId, ref);
    const options = dto.options ?? null;
    if (options && new Set(options.map((o) => o.id)).size !== options.length) {
      throw badRequest(
        'Option ids must be unique',
        { fields: [{ field: 'options', messages: ['duplicate option id'] }] },
        'validation_failed',
      );
    }
    const allowFreeText = dto.allowFreeText ?? !options;
    if (!options && !allowFreeText) {
      throw badRequest(
        'A question needs options or free text',
        { fields: [{ field: 'allowFreeText', messages: ['must be true without options'] }] },
        'validation_failed',
      );
    }
    const row = await this.repo.insert(issue.companyId, {
      issueId: issue.id,
      agentId: actor.agentId,
      runId: actor.runId ?? null,
      prompt: dto.prompt,
      options,
      allowFreeText,
    });
    return toInteraction(row);
  }

  async list(routeCompanyId: string | undefined, ref: string): Promise<InteractionDto[]> {
    const issue = await this.store.load(routeCompanyId, ref);
    return (await this.repo.listOfIssue(issue.companyId, issue.id)).map(toInteraction);
  }

  /** For the heartbeat context: the issue's latest interactions with their answers. */
  async ofIssue(companyId: string, issueId: string): Promise<InteractionDto[]> {
    return (await this.repo.listOfIssue(companyId, issueId, 20)).map(toInteraction);
  }

  /** Board only. 409 once answered; 422 for an unknown option or free text where none is allowed. Wakes the asking agent. */
  async answer(
    actor: Actor,
    routeCompanyId: string | undefined,
    ref: string,
    interactionId: string,
    dto: AnswerInteractionDto,
  ): Promise<InteractionDto> {
    if (actor.kind !== 'board') throw forbidden('Only board users answer interactions');
    const issue = await this.store.load(routeCompanyId, ref);
    const found = isUuid(interactionId) ? await this.repo.find(issue.companyId, issue.id, interactionId) : null;
    if (!found) throw notFound('Interaction');
    if (found.status !== 'pending')
      throw issueError('interaction_answered', 'The interaction was already answered', { answeredAt: found.answeredAt });
    if (dto.optionId === undefined && dto.text === undefined) {
      throw badRequest(
        'Answer with optionId or text',
        { fields: [{ field: 'optionId', messages: ['optionId or text required'] }] },
        'validation_failed',
      );
    }
    if (dto.optionId !== undefined && !(found.options ?? []).some((o) => o.id === dto.optionId)) {
      throw issueError('invalid_option', 'Not an option of this question', { optionId: dto.optionId });
    }
    if (dto.optionId === undefined && !found.allowFreeText) {
      throw issueError('option_required', 'This question takes one of its options');
    }
    const answered = await this.repo.answer(issue.companyId, found.id, {
      optionId: dto.optionId ?? null,
      text: dto.text ?? null,
      userId: actor.userId,
    });
    if (!answered) throw issueError('interaction_answered', 'The interaction was already answered');
    await this.wakeups.interactionAnswered(issue, answered.askedByAgentId, answered.id, actor);
    return toInteraction(answered);
  }
}
