#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""callgrind_calls.py FILE FUNC... - for each FUNC, how often it was called
and its inclusive instructions (Ir) per call, summed over every caller in
one callgrind output file: the exact cost of one trip through an entry
point (a send, a delivery), with no poll-loop spin in it. Prints
"FUNC calls Ir_per_call" per line (0 0 when never called)."""
import re
import sys


def main():
	path, wanted = sys.argv[1], set(sys.argv[2:])
	names = {}
	calls = {f: 0 for f in wanted}
	cost = {f: 0 for f in wanted}
	pending = None  # (function, calls) waiting for its cost line
	with open(path, errors='replace') as fh:
		for line in fh:
			if pending:
				fn, n = pending
				pending = None
				fields = line.split()
				if len(fields) >= 2 and fn in wanted:
					calls[fn] += n
					cost[fn] += int(fields[1])
				continue
			m = re.match(r'(c?fn)=\((\d+)\)(?: (.*))?$', line.rstrip('\n'))
			if m:
				if m.group(3):
					names[m.group(2)] = m.group(3)
				if m.group(1) == 'cfn':
					current_callee = names.get(m.group(2), '')
				continue
			if line.startswith('calls='):
				pending = (current_callee, int(line[6:].split()[0]))
	for f in sys.argv[2:]:
		per = cost[f] / calls[f] if calls[f] else 0
		print('%s %d %.0f' % (f, calls[f], per))


if __name__ == '__main__':
	main()
