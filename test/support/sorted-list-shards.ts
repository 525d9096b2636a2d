/**
 * What `sorted_list_shards` should hold for a list: its ids in list order, cut into shards that
 * respect the sizes the triggers keep. Shared by the test in workerd and the migration's in Node.
 */

/** A `sorted_list_shards` row as SQL returns it. */
export type SortedListShard = { owner: string; first_key: string; size: number; ids: string };

/** Shard sizes: a shard is split when it reaches `split`, one under `merge` joins the one before. */
export type ShardSizes = { split: number; merge: number };
export const SHARD_SIZES: ShardSizes = { split: 4096, merge: 1024 };

/** A shard's ids: its entries (",id", padded to one width) read as a JSON array. */
export const idsOfShard = (ids: string): (string | number)[] => JSON.parse(`[${ids.slice(1)}]`) as (string | number)[];

/**
 * How a list's shards disagree with its rows in list order (`expected`, per owner): none when
 * each owner's shards, by first key, hold exactly those ids in that order, the first shard's key
 * is "", each entry is `width` long, and no shard but the first is under `merge` or over
 * `split + merge` (the most a merge leaves).
 */
export function shardsThatDisagree(
  expected: Map<string, (string | number)[]>,
  shards: SortedListShard[],
  width: number,
  sizes: ShardSizes = SHARD_SIZES,
): string[] {
  const byOwner = new Map<string, SortedListShard[]>();
  for (const shard of [...shards].sort((a, b) => (a.first_key < b.first_key ? -1 : 1))) {
    byOwner.set(shard.owner, [...(byOwner.get(shard.owner) ?? []), shard]);
  }
  const owners = new Set([...expected.keys(), ...byOwner.keys()]);
  return [...owners].flatMap((owner) => {
    const ofOwner = byOwner.get(owner) ?? [];
    const problems: string[] = [];
    ofOwner.forEach((shard, index) => {
      if (shard.ids.length !== shard.size * width) problems.push(`${owner}: shard ${shard.first_key} holds ${shard.ids.length / width}, says ${shard.size}`);
      if (index === 0 && shard.first_key !== "") problems.push(`${owner}: the first shard's key is ${shard.first_key}`);
      if (index > 0 && shard.size < sizes.merge) problems.push(`${owner}: shard ${shard.first_key} holds only ${shard.size}`);
      if (shard.size > sizes.split + sizes.merge) problems.push(`${owner}: shard ${shard.first_key} holds ${shard.size}`);
    });
    const held = ofOwner.flatMap((shard) => idsOfShard(shard.ids));
    const wanted = expected.get(owner) ?? [];
    if (JSON.stringify(held) !== JSON.stringify(wanted)) problems.push(`${owner}: holds ${held.length} ids, not the ${wanted.length} of the list in order`);
    return problems;
  });
}

/** Rows (`owner`, `id`) in list order, grouped by owner. */
export function idsByOwner(rows: { owner: string | number; id: string | number }[]): Map<string, (string | number)[]> {
  const byOwner = new Map<string, (string | number)[]>();
  for (const { owner, id } of rows) {
    const ids = byOwner.get(String(owner)) ?? [];
    ids.push(id);
    byOwner.set(String(owner), ids);
  }
  return byOwner;
}
