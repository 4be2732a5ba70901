/** Issue interactions (the waiting paths a watchdog must see) and who may resolve them (their audience). */
import { AppError, notFound } from '../domain/errors';
import { logActivity } from '../db/activity-log';
import { issueInCompany, permitOnIssue } from '../access/authority';
import type { Deps } from '../runtime/deps';
import type { ScopedActor } from '../domain/actor';
import { recordSubtreeChange } from '../changes/record';

export type InteractionAudience = 'anyone' | 'human_only' | 'not_creator';

export interface OpenInteractionInput {
  kind: string;
  audience: InteractionAudience;
  addresseeAgentId?: string | null;
}

export async function openInteraction(deps: Deps, actor: ScopedActor, issueId: string, input: OpenInteractionInput) {
  const interaction = await deps.db.$transaction(async (tx) => {
    await permitOnIssue(tx, actor, 'interaction.open', await issueInCompany(tx, actor, issueId), actor.companyId);
    if (input.addresseeAgentId) {
      const agent = await tx.agent.findUnique({ where: { id: input.addresseeAgentId } });
      if (!agent || agent.companyId !== actor.companyId) throw notFound('addressee agent');
    }
    const created = await tx.interaction.create({
      data: {
        companyId: actor.companyId,
        issueId,
        kind: input.kind,
        audience: input.audience,
        addresseeAgentId: input.addresseeAgentId ?? null,
        createdByKind: actor.kind,
        createdByAgentId: actor.kind === 'run' ? actor.agentId : null,
      },
    });
    const details = { interactionId: created.id };
    await logActivity(tx, {
      companyId: actor.companyId,
      actor,
      action: 'issue.interaction_created',
      entityType: 'issue',
      entityId: issueId,
      details,
    });
    await recordSubtreeChange(tx, [issueId], 'interaction_created');
    return created;
  });
  return interaction;
}

/** The ordinary resolver audience holds against agents, watchdogs included; a person resolves any. */
function assertInAudience(
  actor: ScopedActor,
  interaction: { audience: string; createdByAgentId: string | null; addresseeAgentId: string | null },
): void {
  if (actor.kind !== 'run') return;
  if (interaction.audience === 'human_only') {
    throw new AppError('forbidden', 'interaction audience is human_only: an agent run cannot resolve it');
  }
  if (interaction.audience === 'not_creator' && interaction.createdByAgentId === actor.agentId) {
    throw new AppError('forbidden', 'interaction audience is not_creator: its creator cannot resolve it');
  }
  if (interaction.addresseeAgentId && interaction.addresseeAgentId !== actor.agentId) {
    throw new AppError('forbidden', 'interaction is addressed to another agent');
  }
}

export interface ResolveInteractionInput {
  status: 'resolved' | 'cancelled';
  resolution?: Record<string, unknown>;
}

/** Resolves a pending interaction exactly once (a second or concurrent resolve is 409). */
export async function resolveInteraction(
  deps: Deps,
  actor: ScopedActor,
  interactionId: string,
  input: ResolveInteractionInput,
) {
  const interaction = await deps.db.$transaction(async (tx) => {
    const existing = await tx.interaction.findUnique({ where: { id: interactionId } });
    if (!existing || existing.companyId !== actor.companyId) throw notFound('interaction');
    if (existing.status !== 'pending') throw new AppError('conflict', `interaction is already ${existing.status}`);
    await permitOnIssue(
      tx,
      actor,
      'interaction.resolve',
      { id: existing.issueId, companyId: existing.companyId },
      actor.companyId,
    );
    assertInAudience(actor, existing);
    const { count } = await tx.interaction.updateMany({
      where: { id: interactionId, status: 'pending' },
      data: {
        status: input.status,
        resolution: (input.resolution ?? {}) as object,
        resolvedAt: new Date(),
        resolvedByKind: actor.kind,
        resolvedByAgentId: actor.kind === 'run' ? actor.agentId : null,
      },
    });
    if (count !== 1) throw new AppError('conflict', 'interaction was resolved concurrently');
    const details = { interactionId, status: input.status };
    await logActivity(tx, {
      companyId: actor.companyId,
      actor,
      action: 'issue.interaction_resolved',
      entityType: 'issue',
      entityId: existing.issueId,
      details,
    });
    await recordSubtreeChange(tx, [existing.issueId], 'interaction_resolved');
    return tx.interaction.findUniqueOrThrow({ where: { id: interactionId } });
  });
  return interaction;
}
