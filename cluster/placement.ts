/**
 * Where the replicas of a shard belong (design: ../shared/design/cluster.md §3.2 "Placement"):
 * rendezvous hashing, or highest random weight (HRW), of (dataset, shard) over the nodes, with
 * distinct zones preferred. Pure functions, so the controller, routers and tests agree on a
 * ranking without asking each other.
 *
 * HRW rather than a ring or a table: each node's score for a shard depends only on the shard and
 * that node, so a node joining or leaving moves only the shards whose top places it takes or
 * held, and nothing has to be stored to reproduce a placement.
 */
import { murmur3x86_32 } from '../catalog/placement/shard-of.js';

export interface PlacementNode {
  id: string;
  /** Placement prefers distinct zones; null = not declared. */
  zone: string | null;
}

const utf8 = new TextEncoder();

/** The HRW score of node `nodeId` for a shard: murmur3 (x86, 32-bit, seed 0) of `dataset/shard/node` in UTF-8. */
export function hrwScore(dataset: string, shard: number, nodeId: string): number {
  return murmur3x86_32(utf8.encode(`${dataset}/${shard}/${nodeId}`));
}

/**
 * The node ids ranked for a shard, best first: by HRW score (highest first, ties by id so every
 * caller orders equal scores the same way), then distinct zones first: the best node of each
 * zone not yet used, in rank order, then the rest in rank order. Nodes without a zone count as one
 * zone of their own: an undeclared zone may be any, so two of them are not "distinct"; when no
 * node declares a zone the ranking is the plain HRW order.
 */
export function hrwRank(dataset: string, shard: number, nodes: readonly PlacementNode[]): string[] {
  if (new Set(nodes.map((n) => n.id)).size !== nodes.length) throw new RangeError('placement ranks distinct node ids');
  const ranked = nodes
    .map((n) => ({ node: n, score: hrwScore(dataset, shard, n.id) }))
    .sort((a, b) => b.score - a.score || (a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0))
    .map((r) => r.node);
  const seenZones = new Set<string | null>();
  const first: string[] = [];
  const rest: string[] = [];
  for (const n of ranked) {
    if (seenZones.has(n.zone)) {
      rest.push(n.id);
    } else {
      seenZones.add(n.zone);
      first.push(n.id);
    }
  }
  return [...first, ...rest];
}

/** The nodes that should hold the shard's replicas: the first min(replicas, nodes) of hrwRank. */
export function desiredReplicas(dataset: string, shard: number, replicas: number, nodes: readonly PlacementNode[]): string[] {
  if (!Number.isInteger(replicas) || replicas < 1) throw new RangeError(`a shard has a whole number of replicas, at least 1 (got ${replicas})`);
  return hrwRank(dataset, shard, nodes).slice(0, replicas);
}
