/** Companies and their agents: the admin creates a company (and its board token), the board its agents. */
import type { Prisma } from '../generated/prisma/client';
import type { AgentStatus } from '../domain/statuses';
import { hashToken, newTokenSecret } from '../domain/tokens';
import { notFound } from '../domain/errors';
import { logActivity } from '../db/activity-log';
import type { Deps } from '../runtime/deps';
import type { OnCreated } from '../db/prisma';
import type { ScopedActor } from '../domain/actor';

type AgentRow = { id: string; companyId: string; name: string; status: string; adapter: unknown; createdAt: Date };
export const presentAgent = (a: AgentRow) => ({
  id: a.id,
  companyId: a.companyId,
  name: a.name,
  status: a.status,
  adapter: a.adapter,
  createdAt: a.createdAt,
});
type PresentedAgent = ReturnType<typeof presentAgent>;

/** The new company with its board token (the secret is shown once; only its hash is stored). */
export async function createCompany(deps: Deps, name: string) {
  const secret = newTokenSecret('twb');
  const company = await deps.db.$transaction(async (tx) => {
    const created = await tx.company.create({ data: { name } });
    await tx.apiToken.create({ data: { tokenHash: hashToken(secret), kind: 'board', companyId: created.id } });
    await logActivity(tx, {
      companyId: created.id,
      actor: { kind: 'admin' },
      action: 'company.created',
      entityType: 'company',
      entityId: created.id,
    });
    return created;
  });
  return { id: company.id, name: company.name, boardToken: secret };
}

export interface AgentInput {
  name: string;
  adapter: Prisma.InputJsonValue;
  status?: AgentStatus;
}

export async function createAgent(
  deps: Deps,
  actor: ScopedActor,
  input: AgentInput,
  onCreated?: OnCreated<PresentedAgent>,
) {
  return deps.db.$transaction(async (tx) => {
    const created = await tx.agent.create({
      data: {
        companyId: actor.companyId,
        name: input.name,
        adapter: input.adapter,
        status: input.status ?? 'active',
      },
    });
    await logActivity(tx, {
      companyId: actor.companyId,
      actor,
      action: 'agent.created',
      entityType: 'agent',
      entityId: created.id,
    });
    const agent = presentAgent(created);
    await onCreated?.(tx, agent);
    return agent;
  });
}

export async function listAgents(deps: Deps, companyId: string) {
  return (await deps.db.agent.findMany({ where: { companyId }, orderBy: { createdAt: 'asc' } })).map(presentAgent);
}

export async function updateAgent(deps: Deps, actor: ScopedActor, agentId: string, changes: Partial<AgentInput>) {
  const existing = await deps.db.agent.findUnique({ where: { id: agentId } });
  if (!existing || existing.companyId !== actor.companyId) throw notFound('agent');
  const agent = await deps.db.$transaction(async (tx) => {
    const updated = await tx.agent.update({ where: { id: agentId }, data: changes });
    await logActivity(tx, {
      companyId: actor.companyId,
      actor,
      action: 'agent.updated',
      entityType: 'agent',
      entityId: agentId,
      details: { changes },
    });
    return updated;
  });
  return presentAgent(agent);
}
