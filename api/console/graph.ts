/**
 * The ownership graph's process tree, laid out by elkjs (layered, top-down) and drawn by the run page
 * as SVG on the server: the browser runs no layout code.
 */
import ELK, { type ElkExtendedEdge, type ElkNode } from 'elkjs/lib/elk.bundled.js';

export interface GraphProcess {
  pid: number;
  ppid: number;
  pgid: number;
  command: string;
}

export interface DrawnNode {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
  label: string;
  detail: string;
}

export interface DrawnGraph {
  width: number;
  height: number;
  nodes: DrawnNode[];
  edges: { points: { x: number; y: number }[] }[];
}

const elk = new ELK();
const NODE_WIDTH = 250;
const NODE_HEIGHT = 44;

/** The owner (run or job) on top, its processes below by parent pid; a parent outside the tree hangs from the owner. */
export async function layoutProcessTree(ownerLabel: string, processes: GraphProcess[]): Promise<DrawnGraph> {
  const pids = new Set(processes.map((p) => p.pid));
  const nodes = [
    { id: 'owner', label: ownerLabel, detail: 'owner' },
    ...processes.map((p) => ({
      id: `pid-${p.pid}`,
      label: `pid ${p.pid}`,
      detail: `${p.command.length > 18 ? `${p.command.slice(0, 17)}…` : p.command} (pgid ${p.pgid})`,
    })),
  ];
  const edges = processes.map((p) => ({
    id: `e-${p.pid}`,
    sources: [pids.has(p.ppid) ? `pid-${p.ppid}` : 'owner'],
    targets: [`pid-${p.pid}`],
  }));
  const laid: ElkNode = await elk.layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.spacing.nodeNode': '24',
      'elk.layered.spacing.nodeNodeBetweenLayers': '36',
    },
    children: nodes.map((n) => ({ id: n.id, width: NODE_WIDTH, height: NODE_HEIGHT })),
    edges,
  });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  return {
    width: Math.ceil(laid.width ?? NODE_WIDTH),
    height: Math.ceil(laid.height ?? NODE_HEIGHT),
    nodes: (laid.children ?? []).map((c) => ({
      id: c.id,
      x: c.x ?? 0,
      y: c.y ?? 0,
      width: c.width ?? NODE_WIDTH,
      height: c.height ?? NODE_HEIGHT,
      label: byId.get(c.id)?.label ?? c.id,
      detail: byId.get(c.id)?.detail ?? '',
    })),
    edges: ((laid.edges ?? []) as ElkExtendedEdge[]).flatMap((e) =>
      (e.sections ?? []).map((s) => ({ points: [s.startPoint, ...(s.bendPoints ?? []), s.endPoint] })),
    ),
  };
}
