// A V8 CPU profile (`node --cpu-prof`) as a flame graph SVG, and where the time goes as text:
//   node --import tsx test/bench/flamegraph.ts <file.cpuprofile> <out.svg> [title]
// The SVG comes from the `flamegraph` package (thlorenz, MIT), which reads the older tree-shaped
// profile format; this converts the current one (flat nodes with child ids) to it. The text lists
// self time per function and the share of samples under a few frames worth naming.
import fs from 'node:fs';
import { createRequire } from 'node:module';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; scriptId: string };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
}
interface TreeNode {
  functionName: string;
  url: string;
  lineNumber: number;
  scriptId: string;
  hitCount: number;
  children: TreeNode[];
}

const require = createRequire(import.meta.url);
const flamegraph = require('flamegraph') as {
  fromCpuProfile(p: { head: TreeNode; startTime: number; endTime: number }, opts: Record<string, unknown>): string;
};

const [input, output, title] = process.argv.slice(2);
if (!input || !output) {
  process.stderr.write('usage: flamegraph.ts <file.cpuprofile> <out.svg> [title]\n');
  process.exit(2);
}
const profile = JSON.parse(fs.readFileSync(input, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const short = (url: string) => url.replace(/^file:\/\/.*?\/(node_modules|server|test)\//, '$1/');
const tree = (n: ProfileNode): TreeNode => ({
  functionName: n.callFrame.functionName || '(anonymous)',
  url: short(n.callFrame.url),
  lineNumber: n.callFrame.lineNumber + 1,
  scriptId: n.callFrame.scriptId,
  hitCount: n.hitCount ?? 0,
  children: (n.children ?? []).map((id) => tree(byId.get(id)!)),
});
const head = tree(profile.nodes[0]);

// Frames under 0.05% of the samples are folded into their caller (its self time keeps their
// samples): too narrow to see, and a process's start-up (module loading) otherwise makes the SVG
// megabytes of invisible boxes.
const inclusive = (n: TreeNode): number => n.hitCount + n.children.reduce((s, c) => s + inclusive(c), 0);
const minimum = inclusive(head) * 0.0005;
const prune = (n: TreeNode): number => {
  let sum = n.hitCount;
  n.children = n.children.filter((c) => {
    const sub = prune(c);
    sum += sub;
    if (sub >= minimum) return true;
    n.hitCount += sub;
    return false;
  });
  return sum;
};
const shown = structuredClone(head);
prune(shown);
fs.writeFileSync(
  output,
  flamegraph.fromCpuProfile(
    { head: shown, startTime: profile.startTime / 1e6, endTime: profile.endTime / 1e6 },
    { titletext: title ?? 'CPU profile', internals: true, removenarrows: true },
  ),
);

// Self samples per function, and total samples under each frame (counted once per stack).
const self = new Map<string, number>();
const under = new Map<string, number>();
let total = 0;
const walk = (n: TreeNode, stack: Set<string>): number => {
  const name = `${n.functionName} ${n.url}:${n.lineNumber}`;
  total += n.hitCount;
  self.set(name, (self.get(name) ?? 0) + n.hitCount);
  const fresh = !stack.has(n.functionName);
  if (fresh) stack.add(n.functionName);
  const sub: number = n.hitCount + n.children.reduce((s: number, c) => s + walk(c, stack), 0);
  if (fresh) {
    under.set(n.functionName, (under.get(n.functionName) ?? 0) + sub);
    stack.delete(n.functionName);
  }
  return sub;
};
walk(head, new Set());
const pct = (v: number) => `${((v / total) * 100).toFixed(1)}%`;
process.stdout.write(`${total} samples\nself time, top 25:\n`);
for (const [name, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
  process.stdout.write(`  ${pct(v).padStart(6)}  ${name}\n`);
}
process.stdout.write('total time under a frame, top 30:\n');
for (const [name, v] of [...under].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
  process.stdout.write(`  ${pct(v).padStart(6)}  ${name}\n`);
}
