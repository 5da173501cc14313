#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""depgraph.py - the dependency picture of msgaccel's lib/ and bench/ (issue 24).

    depgraph.py [--dot FILE] [--check RULES] SRCDIR [BUILDDIR]

Two graphs per area (lib/ and bench/, reported separately):

  include  file -> the project file each `#include "x.h"` really means. A
           name is looked up as the compiler would with the build's -I
           flags: beside the including file, then in include/, lib/ and
           each folder under it, then bench/ and each folder under it.
           Names not found (config.h, system headers) are left out.
  call     .c -> .c, from the built objects under BUILDDIR: a file's
           undefined symbols (nm U) resolved to the file of the same
           program that defines them (nm T/D/B/R, global). Objects are
           automake's per-target ones, `<target>-<file>.o`; the lib area
           reads the library's (target `*_la`), the bench area the tools'
           (targets with no source in tests/). Calls a program makes into
           the shared library are not edges (they go through the public
           API). Without BUILDDIR only the include graph is drawn.

For each graph: files, edges, strongly connected components of more than
one file (Tarjan) and the folders each spans, the largest, and each file's
fan-out (how many other project files it includes or calls).

A file's folder is its first folder under lib/ ("lib/core/x.c" is in
"core"; a file directly in lib/ is in "lib"), or "bench" for anything
under bench/, or "include" for include/.

--check RULES reads the rules file (format at the top of lib/LAYERS) and
exits 1 with one line per violation: an include or call edge from a folder
to one its rule does not allow; an include or call loop (SCC) spanning
more than one folder, when any of those folders has a rule; an edge from a
file that has its own rule to a folder that rule does not allow; and,
for the folders a line "acyclic: FOLDER..." names, any loop at all among
their files (a transport's lower files reach their owners only through
callbacks, issue 34). Folders without a rule are drawn but not checked,
so the rules drive everything.

--dot FILE writes the graphs as Graphviz digraphs (one per area and kind),
files clustered by folder.

The default output is plain text on stdout. Python 3 standard library and
nm (the NM environment variable, default "nm") only.
"""

import argparse
import os
import re
import subprocess
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE_EXT = ('.c', '.h', '.cc')


def folder_of(path):
	"""The layer a source path (relative to SRCDIR) belongs to."""
	parts = path.split('/')
	if parts[0] == 'lib':
		return parts[1] if len(parts) > 2 else 'lib'
	return parts[0]


def area_files(srcdir, top):
	"""Every .c/.h/.cc under SRCDIR/top, as paths relative to SRCDIR."""
	out = []
	for root, dirs, files in os.walk(os.path.join(srcdir, top)):
		dirs[:] = sorted(d for d in dirs if not d.startswith('.'))
		for name in sorted(files):
			if name.endswith(SOURCE_EXT):
				out.append(os.path.relpath(os.path.join(root, name),
							   srcdir))
	return out


def subdirs(srcdir, top):
	"""top and every folder under it, relative to SRCDIR."""
	out = []
	for root, dirs, _ in os.walk(os.path.join(srcdir, top)):
		dirs[:] = sorted(d for d in dirs if not d.startswith('.'))
		out.append(os.path.relpath(root, srcdir))
	return out


# ------------------------------------------------------------ includes

def include_graph(srcdir, files):
	search = ['include'] + subdirs(srcdir, 'lib') + subdirs(srcdir, 'bench')
	edges = set()
	for f in files:
		with open(os.path.join(srcdir, f), errors='replace') as fh:
			text = fh.read()
		for name in INCLUDE_RE.findall(text):
			for d in [os.path.dirname(f)] + search:
				cand = os.path.normpath(os.path.join(d, name))
				if os.path.isfile(os.path.join(srcdir, cand)):
					if cand != f:
						edges.add((f, cand))
					break
	return edges


# ------------------------------------------------------------ calls

def objects(builddir):
	"""{program: {source-stem: object path}} for automake's per-target
	objects. "lib/bench_msga_stat-topic.o" and "bench/msga_stat-x.o" are
	the same program: automake prefixes the folder when the source lives
	elsewhere, so a leading "bench_", "lib_" or "tests_" is dropped."""
	progs = {}
	for root, dirs, files in os.walk(builddir):
		dirs.sort()
		for name in sorted(files):
			if not name.endswith('.o') or '-' not in name:
				continue
			prog, stem = name[:-2].split('-', 1)
			for p in ('bench_', 'lib_', 'tests_'):
				if prog.startswith(p):
					prog = prog[len(p):]
			rel = os.path.relpath(root, builddir)
			if os.path.basename(rel) == '.libs':
				rel = os.path.dirname(rel)
			key = os.path.normpath(os.path.join(rel, stem))
			progs.setdefault(prog, {}).setdefault(
				key, os.path.join(root, name))
	return progs


def source_of(srcdir, stem):
	for ext in ('.c', '.cc'):
		if os.path.isfile(os.path.join(srcdir, stem + ext)):
			return stem + ext
	return None


def nm_symbols(obj):
	nm = os.environ.get('NM', 'nm').split()
	res = subprocess.run(nm + [obj], stdout=subprocess.PIPE,
			     universal_newlines=True, check=True)
	defined, undefined = set(), set()
	for line in res.stdout.splitlines():
		f = line.split()
		if len(f) == 2 and f[0] == 'U':
			undefined.add(f[1])
		elif len(f) == 3 and f[1] in 'TDBRCVWG':
			defined.add(f[2])
	return defined, undefined


def call_graph(srcdir, builddir, area):
	"""Edges between .c files of the area's programs, and those files."""
	edges, files = set(), set()
	for prog, objs in sorted(objects(builddir).items()):
		srcs = {}
		for k, obj in sorted(objs.items()):
			srcs[k] = source_of(srcdir, k)
			if srcs[k] is None:     # left over from a moved file
				print('depgraph: note: %s: no source %s.c, skipped'
				      % (obj, k), file=sys.stderr)
		objs = {k: o for k, o in objs.items() if srcs[k]}
		srcs = {k: s for k, s in srcs.items() if s}
		if area == 'lib' and not prog.endswith('_la'):
			continue
		if area == 'bench' and (prog.endswith('_la') or any(
				s.startswith('tests/') for s in srcs.values())):
			continue
		if area == 'bench' and not any(
				s.startswith('bench/') for s in srcs.values()):
			continue
		syms = {}
		for k, obj in objs.items():
			syms[srcs[k]] = nm_symbols(obj)
		owner = {}
		for src, (defined, _) in syms.items():
			for s in defined:
				owner.setdefault(s, src)
		for src, (_, undefined) in syms.items():
			files.add(src)
			for s in undefined:
				if s in owner and owner[s] != src:
					edges.add((src, owner[s]))
	return files, edges


# ------------------------------------------------------------ analysis

def tarjan(nodes, edges):
	"""Strongly connected components, iteratively (no recursion limit)."""
	succ = {n: [] for n in nodes}
	for a, b in sorted(edges):
		succ.setdefault(a, []).append(b)
		succ.setdefault(b, [])
	index, low, on_stack, stack, sccs = {}, {}, set(), [], []
	counter = 0
	for root in sorted(succ):
		if root in index:
			continue
		work = [(root, 0)]
		while work:
			v, i = work.pop()
			if i == 0:
				index[v] = low[v] = counter
				counter += 1
				stack.append(v)
				on_stack.add(v)
			recurse = False
			for j in range(i, len(succ[v])):
				w = succ[v][j]
				if w not in index:
					work.append((v, j + 1))
					work.append((w, 0))
					recurse = True
					break
				if w in on_stack:
					low[v] = min(low[v], index[w])
			if recurse:
				continue
			if low[v] == index[v]:
				comp = []
				while True:
					w = stack.pop()
					on_stack.discard(w)
					comp.append(w)
					if w == v:
						break
				sccs.append(sorted(comp))
			if work:
				u = work[-1][0]
				low[u] = min(low[u], low[v])
	return [c for c in sccs if len(c) > 1]


class Graph:
	def __init__(self, area, kind, nodes, edges):
		self.area, self.kind = area, kind
		self.edges = sorted(edges)
		self.nodes = sorted(set(nodes) | {x for e in edges for x in e})
		self.sccs = sorted(tarjan(self.nodes, edges),
				   key=lambda c: (-len(c), c))

	def longest_chain(self):
		"""The longest path of distinct edges between loops, as files:
		a loop counts as one step (the graph of its SCCs is acyclic)."""
		comp = {n: (n,) for n in self.nodes}
		for c in self.sccs:
			for n in c:
				comp[n] = tuple(c)
		succ = {}
		for a, b in self.edges:
			if comp[a] != comp[b]:
				succ.setdefault(comp[a], set()).add(comp[b])
		best = {}
		order = sorted(set(comp.values()))
		# Post-order without recursion: a node is done when its
		# successors are.
		for start in order:
			stack = [start]
			while stack:
				c = stack[-1]
				if c in best:
					stack.pop()
					continue
				todo = [d for d in sorted(succ.get(c, ())) if d not in best]
				if todo:
					stack.extend(todo)
					continue
				stack.pop()
				tail = max((best[d] for d in succ.get(c, ())),
					   key=len, default=[])
				best[c] = [c] + tail
		chain = max(best.values(), key=len, default=[])
		return [c[0] if len(c) == 1 else '{%s}' % ' '.join(c)
			for c in chain]

	def fan_out(self):
		out = {n: 0 for n in self.nodes}
		for a, _ in self.edges:
			out[a] += 1
		return out


def folders(files):
	return sorted({folder_of(f) for f in files})


def text_report(g, out):
	verb = 'includes' if g.kind == 'include' else 'calls'
	out.write('== %s: %s graph ==\n' % (g.area, g.kind))
	out.write('files %d, edges %d, folders: %s\n' % (
		len(g.nodes), len(g.edges), ' '.join(folders(g.nodes))))
	for a, b in g.edges:
		out.write('  %s -> %s\n' % (a, b))
	out.write('loops (SCCs of more than one file): %d\n' % len(g.sccs))
	for c in g.sccs:
		out.write('  %d files, folders [%s]: %s\n' % (
			len(c), ' '.join(folders(c)), ' '.join(c)))
	if g.sccs:
		out.write('largest loop: %d files\n' % len(g.sccs[0]))
	else:
		out.write('largest loop: none\n')
	chain = g.longest_chain()
	out.write('longest chain: %d files: %s\n' % (len(chain),
						     ' -> '.join(chain)))
	out.write('fan-out (other project files each file %s):\n' % verb)
	fo = g.fan_out()
	for n in sorted(fo, key=lambda n: (-fo[n], n)):
		if fo[n]:
			out.write('  %3d %s\n' % (fo[n], n))
	out.write('\n')


def dot_report(g, out):
	name = '%s_%s' % (g.area, g.kind)
	out.write('digraph "%s" {\n\tlabel="%s: %s graph";\n'
		  '\trankdir=LR;\n\tnode [shape=box, fontsize=10];\n'
		  % (name, g.area, g.kind))
	in_loop = {n for c in g.sccs for n in c}
	for i, fol in enumerate(folders(g.nodes)):
		out.write('\tsubgraph "cluster_%s_%d" {\n\t\tlabel="%s";\n'
			  % (name, i, fol))
		for n in g.nodes:
			if folder_of(n) == fol:
				attr = ', color=red' if n in in_loop else ''
				out.write('\t\t"%s" [label="%s"%s];\n'
					  % (n, os.path.basename(n), attr))
		out.write('\t}\n')
	for a, b in g.edges:
		out.write('\t"%s" -> "%s";\n' % (a, b))
	out.write('}\n')


# ------------------------------------------------------------ rules

def read_rules(path):
	"""{subject: set of folders or files}; a subject is a folder or a
	file path, and so is each allowed name."""
	rules = {}
	with open(path) as fh:
		for num, line in enumerate(fh, 1):
			line = line.split('#', 1)[0].strip()
			if not line:
				continue
			if ':' not in line:
				sys.exit('depgraph: %s:%d: expected "NAME: ALLOWED..."'
					 % (path, num))
			name, allowed = line.split(':', 1)
			rules[name.strip()] = set(allowed.split())
	return rules


def check(graphs, rules, srcdir):
	bad = []
	for subject in sorted(rules):
		if '/' in subject and not os.path.exists(
				os.path.join(srcdir, subject)):
			print('note: rule for %s: no such file, not checked'
			      % subject)
	for g in graphs:
		for a, b in g.edges:
			fa, fb = folder_of(a), folder_of(b)
			for subject in (fa, a):
				if (subject in rules and fb not in rules[subject]
				    and b not in rules[subject]):
					bad.append('layers: %s edge %s -> %s: %s may not '
						   'reach %s' % (g.kind, a, b, subject, fb))
		acyclic = rules.get('acyclic', set())
		for c in g.sccs:
			fs = folders(c)
			if len(fs) > 1 and any(f in rules for f in fs):
				bad.append('layers: %s loop spans folders %s: %s' % (
					g.kind, ' '.join(fs), ' '.join(c)))
			elif len(fs) == 1 and fs[0] in acyclic:
				bad.append('layers: %s loop inside %s, which must have '
					   'none: %s' % (g.kind, fs[0], ' '.join(c)))
	return bad


def main():
	ap = argparse.ArgumentParser(
		description='include and call graphs of lib/ and bench/')
	ap.add_argument('srcdir')
	ap.add_argument('builddir', nargs='?',
			help='built tree for the call graph (omit: includes only)')
	ap.add_argument('--dot', metavar='FILE', help='write Graphviz dot')
	ap.add_argument('--check', metavar='RULES',
			help='exit 1 on each edge or loop the rules forbid')
	args = ap.parse_args()
	if not os.path.isdir(os.path.join(args.srcdir, 'lib')):
		print('depgraph: %s has no lib/' % args.srcdir, file=sys.stderr)
		return 2
	graphs = []
	for area in ('lib', 'bench'):
		files = area_files(args.srcdir, area)
		graphs.append(Graph(area, 'include', files,
				    include_graph(args.srcdir, files)))
		if args.builddir:
			nodes, edges = call_graph(args.srcdir, args.builddir, area)
			if area == 'lib' and not nodes:
				print('depgraph: no library objects (*_la-*.o) under %s'
				      % args.builddir, file=sys.stderr)
				return 2
			graphs.append(Graph(area, 'call', nodes, edges))
	if args.dot:
		with open(args.dot, 'w') as out:
			for g in graphs:
				dot_report(g, out)
	if args.check:
		bad = check(graphs, read_rules(args.check), args.srcdir)
		for line in bad:
			print(line)
		print('layers: %d violation(s) of %s' % (len(bad), args.check))
		return 1 if bad else 0
	for g in graphs:
		text_report(g, sys.stdout)
	return 0


if __name__ == '__main__':
	sys.exit(main())
