/* SPDX-License-Identifier: MIT */
/*
 * msga_cpu - how noisy is each CPU, and which one should a busy-polling
 * thread run on (issue 38; msga_cpu(1) documents the output, whose JSON
 * field names only grow). For each allowed CPU a pinned thread spins on
 * the clock and records every gap above a threshold (lib/core/cpu_spin.c,
 * the measurement msga_cpu_pick(3) makes too), one CPU
 * after another or all at once; /proc/interrupts and /proc/softirqs are
 * read around each run to say which interrupts each CPU took; the CPUs
 * are ranked with a reason each and N polling CPUs chosen, one per core
 * first (lib/proto/cpu_rank.c); the isolation settings, irqbalance and
 * the named devices' interrupts and their affinity are reported.
 *
 * It uses no RDMA device and no library state: the public header's
 * version, lib/proto's parsers and lib/core's measurement (cpu_spin.c,
 * cpu_snap.c, cpu_topo.c), compiled in (lib/LAYERS allows this one tool).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "cpu_rank.h"
#include "cpu_snap.h"
#include "cpu_spin.h"
#include "cpu_sys.h"
#include "cpu_topo.h"
#include "cpulist.h"
#include "irq_affinity.h"
#include "irq_parse.h"
#include "perf_clock.h"

#define DEVS_MAX 8
#define TOP_MAX 3

struct opts {
	double duration;          /* seconds per CPU, or in all with -a */
	uint64_t threshold_ns;
	int all, json;
	int apply_irq;            /* --apply-irq-affinity (root) */
	uint32_t pick;
	const char *cpus;         /* -c LIST */
	const char *devs[DEVS_MAX];
	int ndevs;
};

/* What one CPU took from interrupts during its run. */
struct cpu_irqs {
	int known;                /* both snapshots were read */
	uint64_t irqs, softirqs;
	struct {
		char name[MSGA__IRQ_NAME_MAX];
		uint64_t count;
	} top[TOP_MAX];
};

struct dev {
	const char *name;
	char keys[CPU_SYS_KEYS_MAX][CPU_SYS_KEY_LEN];
	int nkeys;
};

/*
 * A named device's IRQ that may run on a polling CPU: where it should go
 * instead (irq_affinity.h), and, with --apply-irq-affinity, whether it
 * went. One per row of after.irq.
 */
struct irq_move {
	int state;                /* 0 none, 1 advised, 2 moved, -errno */
	char to[256];
};

struct run {
	struct opts o;
	struct irq_move *moves;
	uint32_t n;                    /* CPUs measured */
	struct cpu_spin *jobs;
	struct msga__cpu_noise *noise;
	struct cpu_irqs *took;
	uint32_t *core, *order, *picked, npicked;
	struct msga__cpu_snap first, before, after;
	struct msga__irq_table dirq, dsoft;
	int whole;                     /* dirq: first to after */
	uint64_t rows_dropped, lines_bad;  /* over all snapshots */
	struct cpu_sys_isol isol;
	struct dev devs[DEVS_MAX];
};

/* ---------------------------------------------------------------- options */

static void usage(void)
{
	printf("usage: msga_cpu [options]\n"
	       "  -d, --duration SEC  spin SEC seconds on each CPU (1; with\n"
	       "                      -a in all)\n"
	       "  -t, --threshold NS  record gaps of NS nanoseconds or more\n"
	       "                      (1000)\n"
	       "  -c, --cpus LIST     only these CPUs (\"0-3,8\"; default\n"
	       "                      every allowed one)\n"
	       "  -a, --all           all CPUs at once, not one after another\n"
	       "  -n, --pick N        choose N polling CPUs (1)\n"
	       "  -D, --device DEV    report the interrupts of DEV (an RDMA\n"
	       "                      device, a network device, a PCI\n"
	       "                      address); repeatable\n"
	       "  --json              one JSON object instead of a table\n"
	       "  --apply-irq-affinity  as root: move -D devices' IRQs off\n"
	       "                      the polling CPUs (else only advised)\n"
	       "  --version           print the version and exit\n"
	       "exit status: 0 ok, 1 a runtime error, 2 bad usage\n");
}

/* One line on stderr, exit status 2: what every usage error does. */
static void __attribute__((format(printf, 1, 2), noreturn))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "msga_cpu: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see msga_cpu -h)\n");
	exit(2);
}

static double parse_num(const char *s, double lo, double hi, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		usage_error("invalid %s '%s'", what, s);
	return v;
}

static uint64_t parse_int(const char *s, uint64_t lo, uint64_t hi,
			  const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		usage_error("invalid %s '%s'", what, s);
	return v;
}

static void add_dev(struct opts *o, const char *name)
{
	if (o->ndevs == DEVS_MAX)
		usage_error("more than %d devices (-D)", DEVS_MAX);
	if (!*name || strlen(name) >= CPU_SYS_KEY_LEN || strchr(name, '/'))
		usage_error("invalid device name '%s'", name);
	o->devs[o->ndevs++] = name;
}

static void parse_opts(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "threshold", required_argument, NULL, 't' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "all", no_argument, NULL, 'a' },
		{ "pick", required_argument, NULL, 'n' },
		{ "device", required_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'j' },
		{ "apply-irq-affinity", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .duration = 1, .threshold_ns = 1000, .pick = 1 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:t:c:an:D:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'd':
			o->duration = parse_num(optarg, 0.001, 3600,
						"duration");
			break;
		case 't':
			o->threshold_ns = parse_int(optarg, 1, 1000000000,
						    "threshold");
			break;
		case 'c':
			o->cpus = optarg;
			break;
		case 'a':
			o->all = 1;
			break;
		case 'n':
			o->pick = (uint32_t)parse_int(optarg, 1, MSGA__CPU_MAX,
						      "count");
			break;
		case 'D':
			add_dev(o, optarg);
			break;
		case 'j':
			o->json = 1;
			break;
		case 'A':
			o->apply_irq = 1;
			break;
		case 'h':
			usage();
			exit(0);
		case 'V':
			printf("msga_cpu %s\n", PACKAGE_VERSION);
			exit(0);
		case ':':
			usage_error("option '%s' needs a value",
				    argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->apply_irq && !o->ndevs)
		usage_error("--apply-irq-affinity needs -D DEV (whose IRQs "
			    "to move)");
	if (o->apply_irq && geteuid())
		usage_error("--apply-irq-affinity needs root (it writes "
			    "/proc/irq/N/smp_affinity_list)");
	if (o->threshold_ns >= (uint64_t)(o->duration * 1e9))
		usage_error("threshold %" PRIu64 " ns is not below the "
			    "duration", o->threshold_ns);
}

/* ---------------------------------------------------------------- CPUs */

/* The benchmark clock for lib/core/cpu_spin.c: ns_per_tick is set once
 * perf_clock_init() has run, before any spinning. */
static uint64_t tool_now(void)
{
	return perf_now();
}

static struct msga__spin_clock tool_clock = { tool_now, 1.0 };

/* The allowed CPUs, narrowed to -c's list: into r->jobs. */
static int choose_cpus(struct run *r)
{
	static uint32_t allowed[MSGA__CPU_MAX];
	static uint64_t want[MSGA__CPUSET_WORDS(MSGA__CPU_MAX)];
	int n = msga__cpu_allowed(allowed, MSGA__CPU_MAX), ret;

	if (n <= 0) {
		fprintf(stderr, "msga_cpu: sched_getaffinity: %s\n",
			strerror(n ? -n : ESRCH));
		return -1;
	}
	if (r->o.cpus) {
		ret = msga__cpulist_parse(r->o.cpus, strlen(r->o.cpus), want,
					  MSGA__CPU_MAX);
		if (ret <= 0)
			usage_error("invalid CPU list '%s'", r->o.cpus);
		for (int i = 0; i < n; i++)
			if (msga__cpuset_has(want, MSGA__CPU_MAX, allowed[i]))
				ret--;
		if (ret)
			usage_error("CPU list '%s' names a CPU this process "
				    "may not run on", r->o.cpus);
	}
	r->jobs = calloc((size_t)n, sizeof(*r->jobs));
	if (!r->jobs) {
		fprintf(stderr, "msga_cpu: out of memory\n");
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (!r->o.cpus ||
		    msga__cpuset_has(want, MSGA__CPU_MAX, allowed[i]))
			msga__cpu_spin_init(&r->jobs[r->n++], allowed[i],
					    r->o.threshold_ns,
					    (uint64_t)(r->o.duration * 1e9),
					    &tool_clock);
	return 0;
}

static int alloc_run(struct run *r)
{
	uint32_t nconf = msga__cpu_snap_cpus(), rows = msga__cpu_snap_rows();
	struct msga__cpu_snap *s[] = { &r->first, &r->before, &r->after };

	r->noise = calloc(r->n, sizeof(*r->noise));
	r->took = calloc(r->n, sizeof(*r->took));
	r->core = calloc(r->n, sizeof(*r->core));
	r->order = calloc(r->n, sizeof(*r->order));
	r->picked = calloc(r->n, sizeof(*r->picked));
	if (!r->noise || !r->took || !r->core || !r->order || !r->picked)
		goto nomem;
	for (int i = 0; i < 3; i++)
		if (msga__cpu_snap_init(s[i], nconf, rows))
			goto nomem;
	if (msga__irq_table_init(&r->dirq, nconf, rows) ||
	    msga__irq_table_init(&r->dsoft, nconf, MSGA__SOFTIRQ_ROWS))
		goto nomem;
	return 0;
nomem:
	fprintf(stderr, "msga_cpu: out of memory\n");
	return -1;
}

/* ---------------------------------------------------------------- runs */

static void snap_take(struct run *r, struct msga__cpu_snap *s)
{
	msga__cpu_snap_take(s);
	/* Said at the end, never dropped silently. */
	r->rows_dropped += s->irq.rows_dropped + s->soft.rows_dropped;
	r->lines_bad += s->irq.lines_bad + s->soft.lines_bad;
}

/* The TOP_MAX rows of d with the most on column col, into t->top. */
static void top_rows(const struct msga__irq_table *d, int col,
		     struct cpu_irqs *t)
{
	for (uint32_t i = 0; i < d->nrows; i++) {
		uint64_t n = d->rows[i].counts[col];
		int k = TOP_MAX;

		while (k > 0 && n > t->top[k - 1].count)
			k--;
		if (k == TOP_MAX || !n)
			continue;
		memmove(&t->top[k + 1], &t->top[k],
			(TOP_MAX - 1 - k) * sizeof(t->top[0]));
		snprintf(t->top[k].name, sizeof(t->top[k].name), "%s",
			 d->rows[i].name);
		t->top[k].count = n;
	}
}

/* What each CPU of jobs[first, first + count) took in its window. */
static void attribute(struct run *r, uint32_t first, uint32_t count)
{
	if (msga__cpu_snap_diff(&r->dirq, &r->dsoft, &r->before, &r->after))
		return;
	for (uint32_t i = first; i < first + count; i++) {
		struct cpu_irqs *t = &r->took[i];
		int col = msga__irq_col(&r->dirq, r->jobs[i].cpu);
		int scol = msga__irq_col(&r->dsoft, r->jobs[i].cpu);

		if (col < 0 || scol < 0)
			continue;
		t->known = 1;
		t->irqs = msga__irq_col_total(&r->dirq, (uint32_t)col);
		t->softirqs = msga__irq_col_total(&r->dsoft, (uint32_t)scol);
		top_rows(&r->dirq, col, t);
	}
}

/* Spin on jobs[first, first + count) at once, snapshots around it. */
static void window(struct run *r, uint32_t first, uint32_t count)
{
	snap_take(r, &r->before);
	msga__cpu_spin_run(&r->jobs[first], count);
	snap_take(r, &r->after);
	attribute(r, first, count);
}

static void measure(struct run *r)
{
	snap_take(r, &r->first);
	if (r->o.all) {
		window(r, 0, r->n);
	} else {
		for (uint32_t i = 0; i < r->n; i++)
			window(r, i, 1);
	}
	/* The whole run's interrupts, for the devices' rows: dirq's rows
	 * are after's, in after's order. */
	r->whole = r->first.ok && r->after.ok &&
		   !msga__irq_diff(&r->dirq, &r->first.irq, &r->after.irq);
}

static void rank(struct run *r)
{
	for (uint32_t i = 0; i < r->n; i++) {
		struct msga__cpu_noise *c = &r->noise[i];
		const struct cpu_spin *j = &r->jobs[i];

		c->cpu = j->cpu;
		c->irqs = r->took[i].known ?
				  r->took[i].irqs + r->took[i].softirqs :
				  MSGA__CPU_IRQS_UNKNOWN;
		if (j->ok && j->run_ns &&
		    !msga__noise_summary(&j->rec, j->run_ns, &c->st))
			c->flags = MSGA__CPU_MEASURED;
		r->core[i] = msga__cpu_core(j->cpu);
	}
	msga__cpu_rank(r->noise, r->n, r->order);
	r->npicked = msga__cpu_pick(r->noise, r->core, r->order, r->n,
				    r->o.pick, r->picked);
}

static int dev_row(const struct dev *d, const struct msga__irq_row *row);

/* The polling CPUs and the online ones, as sets. */
static void poll_sets(const struct run *r, uint64_t *poll, uint64_t *online)
{
	char buf[4096];
	ssize_t n = msga__sys_read("/sys/devices/system/cpu/online", buf,
				   sizeof(buf));

	memset(poll, 0, MSGA__CPUSET_WORDS(MSGA__CPU_MAX) * sizeof(*poll));
	for (uint32_t i = 0; i < r->npicked; i++)
		msga__cpuset_add(poll, MSGA__CPU_MAX,
				 r->noise[r->picked[i]].cpu);
	if (n <= 0 || msga__cpulist_parse(buf, (size_t)n, online,
					  MSGA__CPU_MAX) <= 0)
		memset(online, 0,
		       MSGA__CPUSET_WORDS(MSGA__CPU_MAX) * sizeof(*online));
}

/* Write irq's new affinity: 0 or -errno. */
static int irq_write(int irq, const char *list)
{
	char path[64];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (fprintf(f, "%s\n", list) < 0)
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/*
 * For each named device's IRQ whose affinity has a polling CPU: where it
 * should go (its affinity less the pollers, else every other online
 * CPU), moved there with --apply-irq-affinity.
 */
static void plan_moves(struct run *r)
{
	static uint64_t poll[MSGA__CPUSET_WORDS(MSGA__CPU_MAX)],
		online[MSGA__CPUSET_WORDS(MSGA__CPU_MAX)],
		aff[MSGA__CPUSET_WORDS(MSGA__CPU_MAX)],
		to[MSGA__CPUSET_WORDS(MSGA__CPU_MAX)];
	const struct msga__irq_table *t = &r->after.irq;
	char text[256];

	r->moves = calloc(t->nrows ? t->nrows : 1, sizeof(*r->moves));
	if (!r->moves || !r->after.ok)
		return;
	poll_sets(r, poll, online);
	for (uint32_t i = 0; i < t->nrows; i++) {
		struct irq_move *m = &r->moves[i];
		int d;

		for (d = 0; d < r->o.ndevs && !dev_row(&r->devs[d],
						       &t->rows[i]); d++)
			;
		if (d == r->o.ndevs ||
		    cpu_sys_irq_affinity(t->rows[i].irq, text, sizeof(text)) ||
		    msga__cpulist_parse(text, strlen(text), aff,
					MSGA__CPU_MAX) <= 0 ||
		    msga__irq_affinity_away(aff, poll, online, MSGA__CPU_MAX,
					    to) != 1)
			continue;
		msga__cpulist_format(to, MSGA__CPU_MAX, m->to, sizeof(m->to));
		m->state = 1;
		if (r->o.apply_irq)
			m->state = irq_write(t->rows[i].irq, m->to);
		if (r->o.apply_irq && !m->state)
			m->state = 2;
	}
}

static void find_devs(struct run *r)
{
	for (int i = 0; i < r->o.ndevs; i++) {
		r->devs[i].name = r->o.devs[i];
		r->devs[i].nkeys = cpu_sys_dev_keys(r->o.devs[i],
						    r->devs[i].keys,
						    CPU_SYS_KEYS_MAX);
	}
}

static int dev_row(const struct dev *d, const struct msga__irq_row *row)
{
	if (row->irq < 0)
		return 0;
	for (int k = 0; k < d->nkeys; k++)
		if (msga__irq_row_matches(row, d->keys[k], 0))
			return 1;
	return 0;
}

/* Is a chosen polling CPU in the IRQ's affinity text? */
static int hits_pollers(const struct run *r, const char *affinity)
{
	static uint64_t set[MSGA__CPUSET_WORDS(MSGA__CPU_MAX)];

	if (msga__cpulist_parse(affinity, strlen(affinity), set,
				MSGA__CPU_MAX) <= 0)
		return 0;
	for (uint32_t i = 0; i < r->npicked; i++)
		if (msga__cpuset_has(set, MSGA__CPU_MAX,
				     r->noise[r->picked[i]].cpu))
			return 1;
	return 0;
}

/* How many times row i of after fired in the whole run ("null": unknown). */
static const char *run_count(const struct run *r, uint32_t i, char *buf,
			     size_t cap)
{
	if (r->whole && i < r->dirq.nrows)
		snprintf(buf, cap, "%" PRIu64, r->dirq.rows[i].total);
	else
		snprintf(buf, cap, "null");
	return buf;
}

/* Why a CPU was not measured. */
static const char *job_error(const struct cpu_spin *j)
{
	if (j->err == EXDEV)
		return "the thread did not stay on the CPU";
	return strerror(j->err ? j->err : EINVAL);
}

/* ---------------------------------------------------------------- text */

static double us(uint64_t ns)
{
	return ns / 1e3;
}

static const char *or_none(const char *s)
{
	return *s ? s : "none";
}

static void text_head(const struct run *r)
{
	printf("msga_cpu: %u CPUs, %.3g s %s, gaps >= %" PRIu64 " ns, "
	       "clock %s (%s)\n", r->n, r->o.duration,
	       r->o.all ? "all at once" : "each, one after another",
	       r->o.threshold_ns,
	       perf_clock.kind == PERF_CLOCK_TSC ? "tsc" : "monotonic",
	       perf_clock.why);
	printf("isolated: %s; nohz_full: %s; isolcpus=: %s; irqbalance: %s\n",
	       or_none(r->isol.isolated), or_none(r->isol.nohz_full),
	       or_none(r->isol.isolcpus),
	       r->isol.irqbalance ? "running" : "not running");
	printf("%4s %4s %4s %9s %8s %8s %8s %8s %8s %8s %9s %9s %8s %8s\n",
	       "rank", "cpu", "core", "gaps/s", "p50_us", "p90_us", "p99_us",
	       "p99.9", "p99.99", "p99.999", "max_us", "stolen%", "irqs",
	       "softirq");
}

static void text_cpu(const struct run *r, uint32_t i)
{
	const struct msga__cpu_noise *c = &r->noise[i];
	const struct msga__noise_stats *s = &c->st;
	const struct cpu_irqs *t = &r->took[i];

	printf("%4u %4u %4u ", c->rank, c->cpu, r->core[i]);
	if (c->flags & MSGA__CPU_MEASURED)
		printf("%9.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %9.1f "
		       "%9.5f", s->per_ks / 1e3, us(s->pct_ns[0]),
		       us(s->pct_ns[1]), us(s->pct_ns[2]), us(s->pct_ns[3]),
		       us(s->pct_ns[4]), us(s->pct_ns[5]), us(s->max_ns),
		       s->stolen_ppb / 1e7);
	else
		printf("%9s %8s %8s %8s %8s %8s %8s %9s %9s", "-", "-", "-",
		       "-", "-", "-", "-", "-", "-");
	if (t->known)
		printf(" %8" PRIu64 " %8" PRIu64 "\n", t->irqs, t->softirqs);
	else
		printf(" %8s %8s\n", "-", "-");
}

static void text_why(const struct run *r, uint32_t i)
{
	const struct cpu_irqs *t = &r->took[i];

	printf("  cpu %u: %s", r->noise[i].cpu, r->noise[i].why);
	if (!(r->noise[i].flags & MSGA__CPU_MEASURED))
		printf(" (%s)", job_error(&r->jobs[i]));
	for (int k = 0; k < TOP_MAX && t->top[k].count; k++)
		printf("%s%s %" PRIu64, k ? ", " : "; most interrupts: ",
		       t->top[k].name, t->top[k].count);
	printf("\n");
}

/* What --apply-irq-affinity did, or would do, for row i. */
static void text_move(const struct run *r, uint32_t i)
{
	const struct irq_move *m = r->moves ? &r->moves[i] : NULL;
	int irq = r->after.irq.rows[i].irq;

	if (!m || !m->state)
		return;
	if (m->state == 1)
		printf("\n    advice: echo %s > /proc/irq/%d/smp_affinity_list"
		       " (or msga_cpu --apply-irq-affinity, as root)", m->to,
		       irq);
	else if (m->state == 2)
		printf("\n    moved: /proc/irq/%d/smp_affinity_list is now %s",
		       irq, m->to);
	else
		printf("\n    not moved to %s: %s", m->to, strerror(-m->state));
}

static void text_dev(const struct run *r, const struct dev *d)
{
	const struct msga__irq_table *t = &r->after.irq;
	char aff[256], buf[24];
	int found = 0;

	printf("device %s (", d->name);
	for (int k = 0; k < d->nkeys; k++)
		printf("%s%s", k ? " " : "", d->keys[k]);
	printf("):");
	for (uint32_t i = 0; r->after.ok && i < t->nrows; i++) {
		if (!dev_row(d, &t->rows[i]))
			continue;
		if (cpu_sys_irq_affinity(t->rows[i].irq, aff, sizeof(aff)))
			snprintf(aff, sizeof(aff), "?");
		printf("\n  IRQ %s %s, affinity %s, %s during the run%s",
		       t->rows[i].name, t->rows[i].text, aff,
		       run_count(r, i, buf, sizeof(buf)),
		       hits_pollers(r, aff) ? " (may run on a polling CPU)" :
					      "");
		text_move(r, i);
		found = 1;
	}
	printf("%s\n", found ? "" : " no interrupts of its own in "
	       "/proc/interrupts");
}

static void text_out(const struct run *r)
{
	text_head(r);
	for (uint32_t k = 0; k < r->n; k++)
		text_cpu(r, r->order[k]);
	for (uint32_t k = 0; k < r->n; k++)
		text_why(r, r->order[k]);
	printf("poll on:");
	for (uint32_t k = 0; k < r->npicked; k++)
		printf(" %u", r->noise[r->picked[k]].cpu);
	printf("%s\n", r->npicked ? " (best first, one per core first)" :
	       " none measured");
	for (int i = 0; i < r->o.ndevs; i++)
		text_dev(r, &r->devs[i]);
	if (r->rows_dropped || r->lines_bad)
		printf("note: /proc/interrupts and /proc/softirqs: %" PRIu64
		       " rows past the tables, %" PRIu64 " lines not "
		       "understood (not counted)\n", r->rows_dropped,
		       r->lines_bad);
	if (r->isol.irqbalance && r->o.ndevs)
		printf("note: irqbalance runs and would undo any IRQ affinity "
		       "set by hand\n");
	else if (r->o.apply_irq)
		printf("note: an IRQ affinity set by hand holds until "
		       "irqbalance (if started) or a driver reload undoes it\n");
}

/* ---------------------------------------------------------------- JSON */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_stats(const struct msga__noise_stats *s)
{
	static const char *const names[MSGA__NOISE_PCTS] = {
		"p50", "p90", "p99", "p99_9", "p99_99", "p99_999",
	};

	printf("\"run_ns\":%" PRIu64 ",\"gaps\":%" PRIu64
	       ",\"gaps_per_s\":%.3f,\"min_ns\":%" PRIu64 ",\"mean_ns\":%"
	       PRIu64, s->run_ns, s->count, s->per_ks / 1e3, s->min_ns,
	       s->mean_ns);
	for (int k = 0; k < MSGA__NOISE_PCTS; k++)
		printf(",\"%s_ns\":%" PRIu64, names[k], s->pct_ns[k]);
	printf(",\"max_ns\":%" PRIu64 ",\"stolen_ns\":%" PRIu64
	       ",\"stolen_share\":%.9f", s->max_ns, s->stolen_ns,
	       s->stolen_ppb / 1e9);
}

static void json_cpu(const struct run *r, uint32_t i)
{
	const struct msga__cpu_noise *c = &r->noise[i];
	const struct cpu_irqs *t = &r->took[i];

	printf("{\"cpu\":%u,\"core\":%u,\"rank\":%u,\"measured\":%s,", c->cpu,
	       r->core[i], c->rank,
	       c->flags & MSGA__CPU_MEASURED ? "true" : "false");
	if (c->flags & MSGA__CPU_MEASURED) {
		json_stats(&c->st);
	} else {
		printf("\"error\":");
		json_str(job_error(&r->jobs[i]));
	}
	if (t->known) {
		printf(",\"irqs\":%" PRIu64 ",\"softirqs\":%" PRIu64
		       ",\"top_irqs\":[", t->irqs, t->softirqs);
		for (int k = 0; k < TOP_MAX && t->top[k].count; k++) {
			printf("%s{\"name\":", k ? "," : "");
			json_str(t->top[k].name);
			printf(",\"count\":%" PRIu64 "}", t->top[k].count);
		}
		printf("]");
	} else {
		printf(",\"irqs\":null,\"softirqs\":null,\"top_irqs\":[]");
	}
	printf(",\"why\":");
	json_str(c->why);
	printf("}");
}

/* "move_to" (the advised affinity) and "moved" (true, false or the
 * error), when row i may run on a polling CPU. */
static void json_move(const struct run *r, uint32_t i)
{
	const struct irq_move *m = r->moves ? &r->moves[i] : NULL;

	if (!m || !m->state)
		return;
	printf(",\"move_to\":");
	json_str(m->to);
	printf(",\"moved\":");
	if (m->state < 0)
		json_str(strerror(-m->state));
	else
		printf("%s", m->state == 2 ? "true" : "false");
}

static void json_dev(const struct run *r, const struct dev *d)
{
	const struct msga__irq_table *t = &r->after.irq;
	char aff[256], buf[24];
	int n = 0;

	printf("{\"name\":");
	json_str(d->name);
	printf(",\"keys\":[");
	for (int k = 0; k < d->nkeys; k++) {
		printf("%s", k ? "," : "");
		json_str(d->keys[k]);
	}
	printf("],\"irqs\":[");
	for (uint32_t i = 0; r->after.ok && i < t->nrows; i++) {
		if (!dev_row(d, &t->rows[i]))
			continue;
		if (cpu_sys_irq_affinity(t->rows[i].irq, aff, sizeof(aff)))
			aff[0] = '\0';
		printf("%s{\"irq\":%d,\"text\":", n++ ? "," : "",
		       t->rows[i].irq);
		json_str(t->rows[i].text);
		printf(",\"affinity\":");
		json_str(aff);
		printf(",\"during_run\":%s", run_count(r, i, buf,
							 sizeof(buf)));
		printf(",\"on_poller\":%s",
		       hits_pollers(r, aff) ? "true" : "false");
		json_move(r, i);
		printf("}");
	}
	printf("]}");
}

static void json_isol(const struct run *r)
{
	printf("\"isolated\":");
	json_str(r->isol.isolated);
	printf(",\"nohz_full\":");
	json_str(r->isol.nohz_full);
	printf(",\"isolcpus\":");
	json_str(r->isol.isolcpus);
	printf(",\"irqbalance\":%s", r->isol.irqbalance ? "true" : "false");
}

static void json_out(const struct run *r)
{
	printf("{\"tool\":\"msga_cpu\",\"version\":\"%s\",\"mode\":\"%s\","
	       "\"duration_s\":%.6g,\"threshold_ns\":%" PRIu64
	       ",\"clock\":\"%s\",", PACKAGE_VERSION,
	       r->o.all ? "all" : "sequential", r->o.duration,
	       r->o.threshold_ns,
	       perf_clock.kind == PERF_CLOCK_TSC ? "tsc" : "monotonic");
	json_isol(r);
	printf(",\"irq_rows_dropped\":%" PRIu64 ",\"irq_lines_bad\":%"
	       PRIu64, r->rows_dropped, r->lines_bad);
	printf(",\"cpus\":[");
	for (uint32_t k = 0; k < r->n; k++) {
		printf("%s", k ? "," : "");
		json_cpu(r, r->order[k]);
	}
	printf("],\"poll\":[");
	for (uint32_t k = 0; k < r->npicked; k++)
		printf("%s%u", k ? "," : "", r->noise[r->picked[k]].cpu);
	printf("],\"devices\":[");
	for (int i = 0; i < r->o.ndevs; i++) {
		printf("%s", i ? "," : "");
		json_dev(r, &r->devs[i]);
	}
	printf("]}\n");
}

/* ---------------------------------------------------------------- main */

static void free_run(struct run *r)
{
	msga__cpu_snap_fini(&r->first);
	msga__cpu_snap_fini(&r->before);
	msga__cpu_snap_fini(&r->after);
	msga__irq_table_fini(&r->dirq);
	msga__irq_table_fini(&r->dsoft);
	free(r->jobs);
	free(r->noise);
	free(r->took);
	free(r->core);
	free(r->order);
	free(r->picked);
	free(r->moves);
}

int main(int argc, char **argv)
{
	static struct run r;
	int ret = 1;

	parse_opts(&r.o, argc, argv);
	if (choose_cpus(&r) || alloc_run(&r))
		goto out;
	if (perf_clock_init(PERF_CLOCK_AUTO)) {
		fprintf(stderr, "msga_cpu: no clock to measure with\n");
		goto out;
	}
	tool_clock.ns_per_tick = perf_clock.us_per_tick * 1e3;
	cpu_sys_isolation(&r.isol);
	find_devs(&r);
	measure(&r);
	rank(&r);
	plan_moves(&r);
	if (r.o.json)
		json_out(&r);
	else
		text_out(&r);
	ret = r.npicked ? 0 : 1;
out:
	free_run(&r);
	return ret;
}
