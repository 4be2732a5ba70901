/**
 * The one recursive walk over `Issue."parentId"` that every tree query is built from, so the depth bound, the join
 * direction and the carried columns are written once. A walk is a CTE (use it after `WITH RECURSIVE`) whose rows
 * are `id`, `"parentId"`, `depth` (the start rows are 1), the Issue columns asked for and the carried values.
 */
import { Prisma } from '../db/prisma';

/** Walks never go deeper than this many levels, whatever a corrupt parent chain says. */
export const MAX_TREE_DEPTH = 100;

/** Issue columns a walk can carry besides id and parent; static names, never user input. */
type IssueColumn = 'status' | 'assigneeAgentId' | 'createdAt' | 'originKind';

export interface TreeWalkSpec {
  /** the CTE's name */
  name: string;
  /** `down` visits children, `up` parents */
  direction: 'up' | 'down';
  /** FROM (and WHERE) clause giving the start rows; the start issue is aliased `i` */
  from: Prisma.Sql;
  columns?: readonly IssueColumn[];
  /** values of the start rows carried unchanged along the walk: output name → expression over the `from` clause */
  carry?: Record<string, Prisma.Sql>;
  /** a step only enters an issue `i` meeting this condition */
  enterIf?: Prisma.Sql;
  /** a branch ends after a row of the walk meeting this condition (the row itself is kept); `w` is that row */
  stopAfter?: Prisma.Sql;
  /** deepest level produced; {@link MAX_TREE_DEPTH} unless a rule needs less */
  maxDepth?: number;
  /** UNION instead of UNION ALL: walks up from many starts meet on shared ancestors, which are kept once */
  distinct?: boolean;
}

export function treeWalk(spec: TreeWalkSpec): Prisma.Sql {
  const name = Prisma.raw(`"${spec.name}"`);
  const columns = (spec.columns ?? []).map((c) => `, i."${c}"`).join('');
  const carried = Object.entries(spec.carry ?? {});
  const startCarry = carried.length
    ? Prisma.join(
        carried.map(([as, expression]) => Prisma.sql`, ${expression} AS ${Prisma.raw(`"${as}"`)}`),
        '',
      )
    : Prisma.empty;
  const stepCarry = carried.map(([as]) => `, w."${as}"`).join('');
  const join = spec.direction === 'down' ? Prisma.sql`i."parentId" = w.id` : Prisma.sql`i.id = w."parentId"`;
  const conditions = [
    Prisma.sql`w.depth < ${spec.maxDepth ?? MAX_TREE_DEPTH}`,
    ...(spec.enterIf ? [spec.enterIf] : []),
    ...(spec.stopAfter ? [Prisma.sql`NOT (${spec.stopAfter})`] : []),
  ];
  return Prisma.sql`${name} AS (
      SELECT i.id, i."parentId"${Prisma.raw(columns)}${startCarry}, 1 AS depth ${spec.from}
      ${Prisma.raw(spec.distinct ? 'UNION' : 'UNION ALL')}
      SELECT i.id, i."parentId"${Prisma.raw(columns)}${Prisma.raw(stepCarry)}, w.depth + 1
      FROM "Issue" i JOIN ${name} w ON ${join}
      WHERE ${Prisma.join(conditions, ' AND ')}
    )`;
}
