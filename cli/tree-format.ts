/**
 * `treewarden tree`: an issue subtree as text, with the console's badges (status, assignee, run, hold,
 * watchdog and its review task, a review task's watched issue, a pending monitor, blockers).
 */
import type { TreeNode } from '../client';
import { LIVENESS_RECOVERY_WAKE_REASON } from '../domain/liveness';

const short = (id: string) => id.slice(0, 8);

/** One node's badges, in the console's order. */
export function badgesOf(node: TreeNode): string[] {
  const badges = [`[${node.status}]`];
  if (node.assignee) badges.push(`@${node.assignee.name}`);
  if (node.run)
    badges.push(
      `run ${short(node.run.id)}: ${node.run.status}` +
        (node.run.silentState && node.run.silentState !== 'ok' ? ` (${node.run.silentState})` : '') +
        (node.run.wakeReason === LIVENESS_RECOVERY_WAKE_REASON ? ' (liveness recovery)' : ''),
    );
  for (const holdId of node.heldBy) badges.push(`held ${short(holdId)}`);
  if (node.watchdog) {
    const mode = node.watchdog.mode === 'review' ? '' : ` (${node.watchdog.mode})`;
    badges.push(`watchdog${mode}${node.watchdog.lastState ? `: ${node.watchdog.lastState}` : ''}`);
  }
  if (node.watchdog?.reviewIssueId) badges.push(`review task ${short(node.watchdog.reviewIssueId)}`);
  if (node.reviewOf) badges.push(`review of ${short(node.reviewOf.watchedIssueId)}`);
  if (node.monitor) badges.push(`monitor at ${node.monitor.at}`);
  return badges;
}

export function formatTree(root: TreeNode): string {
  const lines: string[] = [];
  const visit = (node: TreeNode, prefix: string, connector: string, childPrefix: string) => {
    lines.push(`${prefix}${connector}${node.title}  ${badgesOf(node).join('  ')}  ${node.id}`);
    const under = prefix + childPrefix;
    for (const blocker of node.blockers)
      lines.push(`${under}${node.children?.length ? '│ ' : '  '}! blocker ${short(blocker.id)}: ${blocker.nextAction}`);
    const children = node.children ?? [];
    children.forEach((child, i) => {
      const last = i === children.length - 1 && node.moreChildren === 0;
      visit(child, under, last ? '└─ ' : '├─ ', last ? '   ' : '│  ');
    });
    if (node.moreChildren > 0)
      lines.push(`${under}└─ … ${node.moreChildren} more (treewarden tree ${node.id} --offset ${children.length})`);
    else if (node.children === null && node.childCount > 0)
      lines.push(`${under}└─ … ${node.childCount} below (treewarden tree ${node.id})`);
  };
  visit(root, '', '', '');
  return lines.join('\n');
}
