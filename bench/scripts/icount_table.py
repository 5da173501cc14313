#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""icount_table.py OUTDIR DEVICE - icount_budget.sh's arithmetic: reads
each OUTDIR/ic-CASE/ run (msga_icount's stdout and its callgrind dumps,
one "idle" and one "traffic" per process, costs split by caller chain),
and writes OUTDIR/icount.tsv, icount.json and icount.md (printed too),
and icount_functions.md: each side's costliest library functions.

Every self cost whose caller chain holds the engine's tick (tick_clock,
poll_cm, run_timers) is the tick's, the rest the messages'. Per side (the
publishing process has the lower pid: it forks the other) and per shared
object, instructions per message, tick left out, are
    (Ir(traffic) - empty_polls * Ir(idle) / idle_polls) / msgs
and a poll that finds nothing costs Ir(idle) / idle_polls; the tick is
given per idle poll and per second of the idle phase (callgrind's slowed
time, but ticks are paced by the clock). Self cost only: an object's
figure is what its own code executed."""
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


TICK = {'tick_clock', 'poll_cm', 'run_timers'}


def read_dump(path):
    """(trigger, messages' {object kind: self Ir}, tick's, the library's
    messages' {function: self Ir}) of one callgrind output file."""
    obs, fns, trigger = {}, {}, ''
    cost, tick, fcost = {}, {}, {}
    ob, fn, in_tick, after_calls = 'other', '', False, False
    with open(path, errors='replace') as fh:
        for line in fh:
            line = line.rstrip('\n')
            if line.startswith('desc: Trigger:'):
                trigger = line.split(':', 2)[2].strip()
                continue
            m = re.match(r'(c?)(ob|fn)=\((\d+)\)(?: (.*))?$', line)
            if m:
                table = obs if m.group(2) == 'ob' else fns
                if m.group(4):
                    table[m.group(3)] = m.group(4)
                if not m.group(1) and m.group(2) == 'ob':
                    ob = object_kind(obs.get(m.group(3), ''))
                elif not m.group(1):
                    # (gcc may name a clone tick_clock.constprop.0)
                    chain = fns.get(m.group(3), '').split("'")
                    in_tick = any(f.split('.')[0] in TICK for f in chain)
                    fn = chain[0].split('.')[0]
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
                    into = tick if in_tick else cost
                    into[ob] = into.get(ob, 0) + int(f[1])
                    if ob == 'lib' and not in_tick:
                        fcost[fn] = fcost.get(fn, 0) + int(f[1])
    return trigger, cost, tick, fcost


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
        trigger, cost, tick, fcost = read_dump(p)
        phase = 'idle' if trigger.endswith('idle') else \
            'traffic' if trigger.endswith('traffic') else None
        if phase:
            pids.setdefault(int(m.group(1)), {})[phase] = cost
            pids[int(m.group(1))][phase + '_tick'] = tick
            pids[int(m.group(1))][phase + '_fn'] = fcost
    sides = {}
    for role, pid in zip(('publisher', 'receiver'), sorted(pids)):
        if role in counts and {'idle', 'traffic'} <= set(pids[pid]):
            sides[role] = (counts[role], pids[pid])
    return sides


def per_side(c, phases):
    msgs = int(c['msgs'])
    idle_polls, empty = int(c['idle_polls']), int(c['empty_polls'])
    secs = int(c['idle_ns']) / 1e9
    row = {'msgs': msgs, 'empty_polls': empty,
           'work_polls': int(c['work_polls']), 'idle_polls': idle_polls}
    kinds = set(phases['idle']) | set(phases['traffic'])
    for k in sorted(kinds):
        idle = phases['idle'].get(k, 0)
        per_idle = idle / idle_polls if idle_polls else 0.0
        row[k] = (phases['traffic'].get(k, 0) - empty * per_idle) / msgs
    # The library's functions, the same arithmetic: where its share goes.
    fns = {}
    for f in set(phases['idle_fn']) | set(phases['traffic_fn']):
        per_idle = phases['idle_fn'].get(f, 0) / idle_polls \
            if idle_polls else 0.0
        fns[f] = (phases['traffic_fn'].get(f, 0) - empty * per_idle) / msgs
    row['lib_functions'] = dict(sorted(fns.items(), key=lambda x: -x[1])[:12])
    if idle_polls:
        tick = phases['idle_tick']
        row['lib_per_idle_poll'] = phases['idle'].get('lib', 0) / idle_polls
        row['tick_lib_per_idle_poll'] = tick.get('lib', 0) / idle_polls
        row['tick_lib_per_s'] = tick.get('lib', 0) / secs if secs else 0.0
        row['tick_all_per_s'] = sum(tick.values()) / secs if secs else 0.0
    return row


def main():
    out, device = sys.argv[1], sys.argv[2]
    rows = []
    for d in sorted(glob.glob(os.path.join(out, 'ic-*'))):
        case = os.path.basename(d)[3:]
        sides = read_run(d)
        if len(sides) != 2:
            print('icount_table: %s: no complete run (see %s)' % (case, d),
                  file=sys.stderr)
            continue
        for role in ('publisher', 'receiver'):
            r = per_side(*sides[role])
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
    # Where each side's library instructions go: its costliest functions
    # (self cost per message; inlined code counts in its caller).
    fn_md = ['| case | side | the library\'s costliest functions, '
             'instructions per message |', '|---|---|---|']
    for r in rows:
        top = [(f, v) for f, v in r['lib_functions'].items() if v >= 1][:8]
        fn_md.append('| %s | %s | %s |' % (r['case'], r['side'], ', '.join(
            '`%s` %.0f' % (f, v) for f, v in top)))
    with open(os.path.join(out, 'icount_functions.md'), 'w') as fh:
        fh.write('\n'.join(fn_md) + '\n')
    print('\n'.join(fn_md))


if __name__ == '__main__':
    main()
