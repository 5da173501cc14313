#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""icount_table.py OUTDIR DEVICE - icount_budget.sh's arithmetic: reads
each OUTDIR/ic-CASE/{msg,full}/ run (msga_icount's stdout and its
callgrind dumps, one "idle" and one "traffic" per process), and writes
OUTDIR/icount.tsv, icount.json and icount.md (printed too).

Per side (the publishing process has the lower pid: it forks the other)
and per shared object, from the pass "msg" (the engine's tick not
collected), instructions per message are
    (Ir(traffic) - empty_polls * Ir(idle) / idle_polls) / msgs
and the cost of a poll that finds nothing, no tick in it, is
Ir(idle) / idle_polls. From the pass "full" (everything collected), the
time-driven work is its idle phase's Ir less the msg pass's, per idle
poll and per second of the idle phase (callgrind's slowed time, but ticks
are paced by the clock). Self cost only: an object's figure is what its
own code executed."""
import glob
import json
import os
import re
import sys
import time

OBJECTS = (('lib', 'libmsgaccel'), ('provider', 'rdmav'),
           ('ibverbs', 'libibverbs'), ('rdmacm', 'librdmacm'),
           ('sodium', 'libsodium'), ('libc', 'libc.so'),
           ('program', 'msga_icount'))


def object_kind(path):
    for kind, needle in OBJECTS:
        if needle in path:
            return kind
    return 'other'


def read_dump(path):
    """(trigger, {object kind: self Ir}) of one callgrind output file."""
    names, cost, trigger = {}, {}, ''
    ob, after_calls = 'other', False
    with open(path, errors='replace') as fh:
        for line in fh:
            if line.startswith('desc: Trigger:'):
                trigger = line.split(':', 2)[2].strip()
                continue
            m = re.match(r'ob=\((\d+)\)(?: (.*))?$', line.rstrip('\n'))
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                ob = object_kind(names.get(m.group(1), ''))
                continue
            if line.startswith('calls='):
                after_calls = True
                continue
            if line[:1].isdigit() or line[:1] in '+-*':
                if after_calls:  # a call's inclusive cost: not self
                    after_calls = False
                    continue
                f = line.split()
                if len(f) >= 2:
                    cost[ob] = cost.get(ob, 0) + int(f[1])
    return trigger, cost


def read_run(d):
    """Per side: counts from stdout and the idle/traffic costs."""
    counts = {}
    with open(os.path.join(d, 'stdout')) as fh:
        for line in fh:
            f = line.split()
            if f and f[0] in ('publisher', 'receiver'):
                counts[f[0]] = {k: v for k, v in
                                (x.split('=', 1) for x in f[1:])}
    pids = {}
    for p in glob.glob(os.path.join(d, 'cg.*')):
        m = re.match(r'cg\.(\d+)(?:\.(\d+))?$', os.path.basename(p))
        if not m:
            continue
        trigger, cost = read_dump(p)
        phase = 'idle' if trigger.endswith('idle') else \
            'traffic' if trigger.endswith('traffic') else None
        if phase:
            pids.setdefault(int(m.group(1)), {})[phase] = cost
    sides = {}
    for role, pid in zip(('publisher', 'receiver'), sorted(pids)):
        if role in counts and {'idle', 'traffic'} <= set(pids[pid]):
            sides[role] = (counts[role], pids[pid])
    return sides


def per_side(c, phases, full):
    msgs = int(c['msgs'])
    idle_polls, empty = int(c['idle_polls']), int(c['empty_polls'])
    row = {'msgs': msgs, 'empty_polls': empty,
           'work_polls': int(c['work_polls']), 'idle_polls': idle_polls}
    kinds = set(phases['idle']) | set(phases['traffic'])
    for k in sorted(kinds):
        idle = phases['idle'].get(k, 0)
        per_idle = idle / idle_polls if idle_polls else 0.0
        row[k] = (phases['traffic'].get(k, 0) - empty * per_idle) / msgs
    if idle_polls:
        row['lib_per_idle_poll'] = phases['idle'].get('lib', 0) / idle_polls
    if full and int(full[0]['idle_polls']):
        fc, fp = full
        n, secs = int(fc['idle_polls']), int(fc['idle_ns']) / 1e9
        scale = n / idle_polls if idle_polls else 0.0
        lib = fp['idle'].get('lib', 0) - phases['idle'].get('lib', 0) * scale
        every = sum(fp['idle'].values()) - \
            sum(phases['idle'].values()) * scale
        row['tick_lib_per_idle_poll'] = lib / n
        row['tick_lib_per_s'] = lib / secs if secs else 0.0
        row['tick_all_per_s'] = every / secs if secs else 0.0
    return row
def main():
    out, device = sys.argv[1], sys.argv[2]
    rows = []
    for d in sorted(glob.glob(os.path.join(out, 'ic-*'))):
        case = os.path.basename(d)[3:]
        sides = read_run(os.path.join(d, 'msg'))
        full = read_run(os.path.join(d, 'full')) \
            if os.path.isdir(os.path.join(d, 'full')) else {}
        if len(sides) != 2:
            print('icount_table: %s: no complete run (see %s)' % (case, d),
                  file=sys.stderr)
            continue
        for role in ('publisher', 'receiver'):
            r = per_side(*sides[role], full.get(role))
            r.update(case=case, side=role)
            rows.append(r)
    if not rows:
        sys.exit('icount_table: no complete run in %s' % out)
    cols = ('lib', 'provider', 'ibverbs', 'rdmacm', 'sodium', 'libc',
            'program', 'other')
    extra = ('lib_per_idle_poll', 'tick_lib_per_idle_poll',
             'tick_lib_per_s', 'tick_all_per_s')
    with open(os.path.join(out, 'icount.tsv'), 'w') as fh:
        fh.write('case\tside\t' + '\t'.join(cols + extra) +
                 '\tempty_polls\twork_polls\tmsgs\n')
        for r in rows:
            fh.write('%s\t%s\t' % (r['case'], r['side']) +
                     '\t'.join('%.1f' % r.get(c, 0) for c in cols + extra) +
                     '\t%d\t%d\t%d\n' % (r['empty_polls'],
                                          r['work_polls'], r['msgs']))
    with open(os.path.join(out, 'icount.json'), 'w') as fh:
        json.dump({'device': device, 'date': time.strftime('%Y-%m-%d'),
                   'unit': 'instructions (Ir) per message, self cost, '
                           'per object; a round trip for pingpong cases',
                   'rows': rows}, fh, indent=1)
    md = ['| case | side | libmsgaccel | provider | libibverbs | libc | '
          'libsodium | program | lib per empty poll | lib tick per idle '
          'poll | lib tick Ir/s | all tick Ir/s | polls with work per msg |',
          '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    for r in rows:
        md.append('| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | '
                  '%.0f | %.0f | %.0f | %.0f | %.2f |' % (
                      r['case'], r['side'], r.get('lib', 0),
                      r.get('provider', 0), r.get('ibverbs', 0),
                      r.get('libc', 0), r.get('sodium', 0),
                      r.get('program', 0), r.get('lib_per_idle_poll', 0),
                      r.get('tick_lib_per_idle_poll', 0),
                      r.get('tick_lib_per_s', 0),
                      r.get('tick_all_per_s', 0),
                      r['work_polls'] / r['msgs']))
    text = '\n'.join(md) + '\n'
    with open(os.path.join(out, 'icount.md'), 'w') as fh:
        fh.write(text)
    print(text, end='')


if __name__ == '__main__':
    main()
