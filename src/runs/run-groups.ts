// Which lanes run together: the lanes of one feed (it is read once for all of them) and the lanes
// into one chatbot (it is paged once for all of them), and so on through what they share: the
// connected groups of the feed–chatbot graph, in the order the lanes were given.
import type { Lane } from '../sync/index.js';

export function runGroups(lanes: readonly Lane[]): Lane[][] {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let root = x;
    while (parent.get(root) !== root) root = parent.get(root)!;
    parent.set(x, root);
    return root;
  };
  const join = (a: string, b: string) => {
    for (const x of [a, b]) if (!parent.has(x)) parent.set(x, x);
    parent.set(find(a), find(b));
  };
  for (const l of lanes) join(`feed:${l.feed.name}`, `chatbot:${l.chatbot}`);
  const groups = new Map<string, Lane[]>();
  for (const l of lanes) {
    const root = find(`feed:${l.feed.name}`);
    const group = groups.get(root);
    if (group) group.push(l);
    else groups.set(root, [l]);
  }
  return [...groups.values()];
}
