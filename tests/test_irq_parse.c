/* SPDX-License-Identifier: MIT */
/*
 * /proc/interrupts and /proc/softirqs parsing (lib/proto/irq_parse.c) and
 * the CPU list text (lib/proto/cpulist.c), from captured files in
 * tests/data/: this build machine's (2 vCPUs, PCI-MSIX chips), the test
 * VM's (2 vCPUs, PCI-MSI, THR/DFR/MCE rows; two snapshots a second apart)
 * and a synthetic 128-CPU machine with 16 CPUs offline in the middle
 * (gen_many_cpu.py: row r, CPU c counts r * 1000 + c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cpulist.h"
#include "irq_affinity.h"
#include "irq_parse.h"

#ifndef MSGA_TEST_DATA
#error "MSGA_TEST_DATA must name tests/data"
#endif

/* A captured file, in an exact-size heap copy (no NUL after it). */
static char *load(const char *name, size_t *len)
{
	char path[512], *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", MSGA_TEST_DATA, name);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	cr_assert_gt(n, 0);
	rewind(f);
	buf = malloc((size_t)n);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static int parse_file(struct msga__irq_table *t, const char *name)
{
	size_t len;
	char *text = load(name, &len);
	int ret = msga__irq_parse(t, text, len);

	free(text);
	return ret;
}

static int parse_str(struct msga__irq_table *t, const char *s)
{
	return msga__irq_parse(t, s, strlen(s));
}

static uint64_t count_of(const struct msga__irq_table *t, const char *row,
			 uint32_t cpu)
{
	const struct msga__irq_row *r = msga__irq_row(t, row);
	int col = msga__irq_col(t, cpu);

	cr_assert_not_null(r, "no row %s", row);
	cr_assert_geq(col, 0, "no CPU %u", cpu);
	return r->counts[col];
}

Test(irq_parse, host_capture)
{
	struct msga__irq_table t;
	const struct msga__irq_row *r;

	cr_assert_eq(msga__irq_table_init(&t, 8, 256), 0);
	/* 36 lines: the header and 35 rows. */
	cr_assert_eq(parse_file(&t, "interrupts_host.txt"), 35);
	cr_assert_eq(t.ncpus, 2);
	cr_assert_eq(t.cpu[0], 0);
	cr_assert_eq(t.cpu[1], 1);
	cr_assert_eq(t.lines_bad, 0);
	cr_assert_eq(t.rows_dropped, 0);
	r = msga__irq_row(&t, "36");
	cr_assert_not_null(r);
	cr_assert_eq(r->irq, 36);
	cr_assert_eq(r->counts[1], 609331);
	cr_assert_eq(r->total, 609331);
	cr_assert_str_eq(r->text, "PCI-MSIX-0000:00:02.0 1-edge virtio1-req.0");
	cr_assert(msga__irq_row_matches(r, "virtio1", 0));
	cr_assert(msga__irq_row_matches(r, "0000:00:02.0", 0));
	cr_assert_not(msga__irq_row_matches(r, "virtio3", 0));
	cr_assert_eq(count_of(&t, "LOC", 0), 26471484);
	cr_assert_str_eq(msga__irq_row(&t, "LOC")->text,
			 "Local timer interrupts");
	cr_assert_eq(msga__irq_row(&t, "LOC")->irq, -1);
	r = msga__irq_row(&t, "ERR");
	cr_assert_not_null(r);
	cr_assert(r->flags & MSGA__IRQ_ROW_GLOBAL);
	cr_assert_eq(r->total, 0);
	cr_assert_str_eq(r->text, "");
	cr_assert_not(msga__irq_row(&t, "MIS")->flags & MSGA__IRQ_ROW_TEXT_CUT);
	cr_assert_null(msga__irq_row(&t, "THR"));
	msga__irq_table_fini(&t);
}

Test(irq_parse, softirqs_capture)
{
	static const char *const names[] = {
		"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL",
		"TASKLET", "SCHED", "HRTIMER", "RCU",
	};
	struct msga__irq_table t;

	cr_assert_eq(msga__irq_table_init(&t, 2, 16), 0);
	cr_assert_eq(parse_file(&t, "softirqs_host.txt"), 10);
	for (int i = 0; i < 10; i++) {
		cr_assert_str_eq(t.rows[i].name, names[i]);
		cr_assert_eq(t.rows[i].irq, -1);
		cr_assert_str_eq(t.rows[i].text, "");
	}
	cr_assert_eq(count_of(&t, "BLOCK", 1), 609313);
	cr_assert_eq(count_of(&t, "NET_RX", 0), 860398);
	cr_assert_eq(t.lines_bad, 0);
	msga__irq_table_fini(&t);
}

/* Two snapshots of the VM a second apart: what happened in between. */
Test(irq_parse, vm_diff)
{
	struct msga__irq_table a, b, d;

	cr_assert_eq(msga__irq_table_init(&a, 4, 64), 0);
	cr_assert_eq(msga__irq_table_init(&b, 4, 64), 0);
	cr_assert_eq(msga__irq_table_init(&d, 4, 64), 0);
	cr_assert_eq(parse_file(&a, "interrupts_vm_before.txt"), 43);
	cr_assert_eq(parse_file(&b, "interrupts_vm_after.txt"), 43);
	cr_assert_eq(b.lines_bad, 0);
	cr_assert_eq(msga__irq_diff(&d, &a, &b), 0);
	cr_assert_eq(d.nrows, 43);
	cr_assert_eq(count_of(&d, "25", 1), 19986 - 19801);
	cr_assert_eq(count_of(&d, "25", 0), 0);
	cr_assert_eq(count_of(&d, "LOC", 0), 12348 - 12272);
	cr_assert_eq(count_of(&d, "LOC", 1), 12550 - 12465);
	cr_assert_eq(msga__irq_row(&d, "40")->total, 1);
	cr_assert_str_eq(msga__irq_row(&d, "40")->text,
			 "PCI-MSI 512000-edge ahci[0000:00:1f.2]");
	cr_assert_eq(msga__irq_row(&d, "ERR")->total, 0);
	/* Every interrupt CPU 0 took in that second. */
	cr_assert_eq(msga__irq_col_total(&d, 0),
		     (12348 - 12272) + (13551 - 13484));
	cr_assert_eq(msga__irq_col_total(&d, 1),
		     185 + 18 + 1 + 85 + 3 + 2);
	cr_assert_eq(msga__irq_col_total(&d, 2), 0);

	cr_assert_eq(parse_file(&a, "softirqs_vm_before.txt"), 10);
	cr_assert_eq(parse_file(&b, "softirqs_vm_after.txt"), 10);
	cr_assert_eq(msga__irq_diff(&d, &a, &b), 0);
	cr_assert_eq(count_of(&d, "TIMER", 0), 2580 - 2551);
	cr_assert_eq(count_of(&d, "NET_RX", 1), 11 - 6);
	cr_assert_eq(count_of(&d, "HI", 1), 0);
	msga__irq_table_fini(&a);
	msga__irq_table_fini(&b);
	msga__irq_table_fini(&d);
}

static uint32_t many_cpu(uint32_t col)
{
	return col < 40 ? col : col + 16;
}

Test(irq_parse, many_cpus_with_gaps)
{
	struct msga__irq_table t;

	cr_assert_eq(msga__irq_table_init(&t, 256, 64), 0);
	cr_assert_eq(parse_file(&t, "interrupts_many.txt"), 17);
	cr_assert_eq(t.ncpus, 128);
	cr_assert_eq(t.lines_bad, 0);
	for (uint32_t c = 0; c < 128; c++)
		cr_assert_eq(t.cpu[c], many_cpu(c));
	for (uint32_t r = 0; r < 15; r++)
		for (uint32_t c = 0; c < 128; c++)
			cr_assert_eq(t.rows[r].counts[c],
				     r * 1000 + many_cpu(c));
	cr_assert_eq(msga__irq_col(&t, 56), 40);
	cr_assert_eq(msga__irq_col(&t, 143), 127);
	cr_assert_eq(msga__irq_col(&t, 40), -1);
	cr_assert_eq(msga__irq_col(&t, 144), -1);
	cr_assert_eq(msga__irq_row(&t, "ERR")->total, 7);
	cr_assert_eq(msga__irq_row(&t, "MIS")->total, 3);
	cr_assert_eq(msga__irq_row(&t, "MIS")->counts[0], 0);
	cr_assert_eq(parse_file(&t, "softirqs_many.txt"), 10);
	cr_assert_eq(count_of(&t, "RCU", 143), 9000 + 143);
	msga__irq_table_fini(&t);
}

/* Which rows a device's names pick out. */
Test(irq_parse, device_rows)
{
	static const struct {
		const char *key;
		int prefix;
		const char *rows; /* the IRQs that match, in order */
	} cases[] = {
		{ "ens1f0", 0, "125,126" },      /* not ens1f01 */
		{ "ens1f01", 0, "127" },
		{ "0000:3b:00.0", 0, "121,122,123" },
		{ "mlx5_comp", 1, "122,123" },
		{ "mlx5_comp", 0, "" },
		{ "mlx5_comp0", 0, "122" },
		{ "i40e", 0, "124,125,126" },
		{ "pciehp", 0, "120" },
		{ "PCIe PME", 0, "120" },
		{ "timer", 0, "0,LOC" },      /* "Local timer interrupts" */
		{ "", 1, "" },
	};
	struct msga__irq_table t;

	cr_assert_eq(msga__irq_table_init(&t, 128, 64), 0);
	cr_assert_eq(parse_file(&t, "interrupts_many.txt"), 17);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char got[128] = "";
		size_t n = 0;

		for (uint32_t r = 0; r < t.nrows; r++)
			if (msga__irq_row_matches(&t.rows[r], cases[i].key,
						  cases[i].prefix))
				n += (size_t)snprintf(got + n, sizeof(got) - n,
						      "%s%s", n ? "," : "",
						      t.rows[r].name);
		cr_assert_str_eq(got, cases[i].rows, "key '%s'",
				 cases[i].key);
	}
	msga__irq_table_fini(&t);
}

Test(irq_parse, limits)
{
	struct msga__irq_table t;

	cr_assert_eq(msga__irq_table_init(&t, 0, 1), -EINVAL);
	cr_assert_eq(msga__irq_table_init(&t, 1, 0), -EINVAL);
	cr_assert_eq(msga__irq_table_init(&t, MSGA__IRQ_CPUS_MAX + 1, 1),
		     -EINVAL);
	cr_assert_eq(msga__irq_table_init(&t, 1, MSGA__IRQ_ROWS_MAX + 1),
		     -EINVAL);
	msga__irq_table_fini(&t);

	/* One CPU column too many: an error, no rows. */
	cr_assert_eq(msga__irq_table_init(&t, 127, 64), 0);
	cr_assert_eq(parse_file(&t, "interrupts_many.txt"), -E2BIG);
	cr_assert_eq(t.nrows, 0);
	msga__irq_table_fini(&t);

	/* Rows past the limit: the first ones kept, the rest counted. */
	cr_assert_eq(msga__irq_table_init(&t, 128, 5), 0);
	cr_assert_eq(parse_file(&t, "interrupts_many.txt"), 5);
	cr_assert_eq(t.rows_dropped, 12);
	cr_assert_str_eq(t.rows[4].name, "121");
	msga__irq_table_fini(&t);
}

Test(irq_parse, bad_text)
{
	struct msga__irq_table t;

	cr_assert_eq(msga__irq_table_init(&t, 4, 8), 0);
	cr_assert_eq(msga__irq_parse(&t, NULL, 0), -EINVAL);
	cr_assert_eq(parse_str(&t, "\n  \n"), -EINVAL);
	cr_assert_eq(parse_str(&t, "CPU1 CPU0\n"), -EINVAL);
	cr_assert_eq(parse_str(&t, "CPU0 CPU0\n"), -EINVAL);
	cr_assert_eq(parse_str(&t, "CPU0 CPUx\n"), -EINVAL);
	cr_assert_eq(parse_str(&t, "CPU0 CPU\n"), -EINVAL);
	cr_assert_eq(parse_str(&t, "CPU0 CPU12345678\n"), -EINVAL);
	cr_assert_eq(parse_str(&t, "LOC: 1 2\n"), -EINVAL);
	cr_assert_eq(parse_str(&t, "CPU0 CPU1 CPU2 CPU3 CPU4\n"), -E2BIG);
	/* A header alone is a table without rows. */
	cr_assert_eq(parse_str(&t, "\n   CPU0  CPU3\n"), 0);
	cr_assert_eq(t.ncpus, 2);
	cr_assert_eq(t.cpu[1], 3);
	cr_assert_eq(parse_str(&t,
			       "  CPU0 CPU1\n"
			       "no colon 1 2\n"          /* bad: no NAME: */
			       " : 1 2 x\n"               /* bad: no name */
			       "A-B: 1 2\n"               /* bad: name chars */
			       "LONGER_THAN_15_CH: 1 2\n" /* bad: too long */
			       "X: 1 2 3\n"               /* ok: "3" is text */
			       "Y: 1\n"                   /* ok: global */
			       "Z: 1 x\n"                 /* bad: 1 count, text */
			       "W:\n"                     /* bad: no count */
			       "V: 99999999999999999999 1\n" /* bad: too big */
			       "U: 4294967295 0 lone\n"
			       "X: 5 6\n"), 3);          /* bad: X again */
	cr_assert_eq(t.lines_bad, 8);
	cr_assert_str_eq(t.rows[0].text, "3");
	cr_assert_eq(t.rows[0].total, 3);
	cr_assert(t.rows[1].flags & MSGA__IRQ_ROW_GLOBAL);
	cr_assert_eq(t.rows[2].counts[0], 4294967295u);
	msga__irq_table_fini(&t);
}

Test(irq_parse, long_text_cut)
{
	struct msga__irq_table t;
	char line[600];
	size_t n;

	n = (size_t)snprintf(line, sizeof(line), "CPU0\n7: 1 ");
	for (int i = 0; i < 60; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "act%02d,  ",
				      i);
	cr_assert_eq(msga__irq_table_init(&t, 1, 1), 0);
	cr_assert_eq(msga__irq_parse(&t, line, n), 1);
	cr_assert(t.rows[0].flags & MSGA__IRQ_ROW_TEXT_CUT);
	cr_assert_eq(strlen(t.rows[0].text), MSGA__IRQ_TEXT_MAX - 1);
	cr_assert_eq(strncmp(t.rows[0].text, "act00, act01, ", 14), 0);
	/* Control bytes come out as '?': the text is a clean string. */
	cr_assert_eq(msga__irq_parse(&t, "CPU0\n7: 1 a\001b\n", 15), 1);
	cr_assert_str_eq(t.rows[0].text, "a?b");
	msga__irq_table_fini(&t);
}

Test(irq_parse, diff_edges)
{
	struct msga__irq_table a, b, d, small;

	cr_assert_eq(msga__irq_table_init(&a, 4, 8), 0);
	cr_assert_eq(msga__irq_table_init(&b, 4, 8), 0);
	cr_assert_eq(msga__irq_table_init(&d, 4, 8), 0);
	cr_assert_eq(msga__irq_table_init(&small, 2, 8), 0);
	cr_assert_eq(parse_str(&a, "CPU0 CPU2\n"
				   "1: 4294967290 10 x\n"
				   "2: 5000000000 1 y\n"
				   "ERR: 9\n"), 3);
	/* CPU 1 came online, IRQ 3 appeared, 1 wrapped, 2 restarted. */
	cr_assert_eq(parse_str(&b, "CPU0 CPU1 CPU2\n"
				   "3: 1 2 3 z\n"
				   "1: 5 7 12 x\n"
				   "2: 4 5 6 y\n"
				   "ERR: 11\n"), 4);
	cr_assert_eq(msga__irq_diff(&d, &a, &b), 0);
	cr_assert_eq(d.ncpus, 3);
	cr_assert_eq(count_of(&d, "3", 1), 2);
	cr_assert_eq(count_of(&d, "1", 0), 11);
	cr_assert_eq(count_of(&d, "1", 1), 7);
	cr_assert_eq(count_of(&d, "1", 2), 2);
	cr_assert_eq(count_of(&d, "2", 0), 4);
	cr_assert_eq(msga__irq_row(&d, "2")->total, 4 + 5 + 5);
	cr_assert_eq(msga__irq_row(&d, "ERR")->total, 2);
	cr_assert_eq(msga__irq_diff(&small, &a, &b), -E2BIG);
	msga__irq_table_fini(&a);
	msga__irq_table_fini(&b);
	msga__irq_table_fini(&d);
	msga__irq_table_fini(&small);
}

static int list(const char *s, uint64_t *set, uint32_t nbits)
{
	return msga__cpulist_parse(s, strlen(s), set, nbits);
}

Test(cpulist, parse)
{
	uint64_t set[3];
	char buf[64];

	cr_assert_eq(list("0-3,8,10-11\n", set, 160), 7);
	cr_assert(msga__cpuset_has(set, 160, 3));
	cr_assert_not(msga__cpuset_has(set, 160, 4));
	cr_assert(msga__cpuset_has(set, 160, 11));
	cr_assert_not(msga__cpuset_has(set, 160, 1000));
	cr_assert_eq(msga__cpuset_first(set, 160), 0);
	cr_assert_eq(msga__cpulist_format(set, 160, buf, sizeof(buf)), 11);
	cr_assert_str_eq(buf, "0-3,8,10-11");
	cr_assert_eq(list("159", set, 160), 1);
	cr_assert_eq(msga__cpuset_first(set, 160), 159);
	cr_assert_eq(list("63-64", set, 160), 2);
	cr_assert_eq(set[0], 1ull << 63);
	cr_assert_eq(set[1], 1);
	/* Empty: isolated and nohz_full with nothing in them. */
	cr_assert_eq(list("\n", set, 160), 0);
	cr_assert_eq(list("", set, 160), 0);
	cr_assert_eq(msga__cpuset_first(set, 160), -1);
	/* Out of order and overlapping, as a hand-written isolcpus= may be. */
	cr_assert_eq(list(" 5,1-6,2 ", set, 160), 6);
	cr_assert_eq(msga__cpulist_format(set, 160, buf, sizeof(buf)), 3);
	cr_assert_str_eq(buf, "1-6");
	cr_assert_eq(list("160", set, 160), -ERANGE);
	cr_assert_eq(list("0-160", set, 160), -ERANGE);
	cr_assert_eq(list("3-1", set, 160), -EINVAL);
	cr_assert_eq(list("1,,2", set, 160), -EINVAL);
	cr_assert_eq(list("1,", set, 160), -EINVAL);
	cr_assert_eq(list("0-", set, 160), -EINVAL);
	cr_assert_eq(list("-1", set, 160), -EINVAL);
	cr_assert_eq(list("0-15:2/4", set, 160), -EINVAL);
	cr_assert_eq(list("12345678", set, 160), -EINVAL);
	/* What nohz_full says when the kernel has no such mask. */
	cr_assert_eq(list("(null)\n", set, 160), -EINVAL);
	cr_assert_eq(list("1 2", set, 160), -EINVAL);
}

Test(cpulist, format_bounds)
{
	uint64_t set[1] = { 0 };
	char buf[8];

	cr_assert_eq(msga__cpulist_format(set, 64, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "");
	for (uint32_t c = 0; c < 64; c += 2)
		msga__cpuset_add(set, 64, c);
	msga__cpuset_add(set, 64, 64); /* past nbits: ignored */
	cr_assert_eq(msga__cpuset_count(set, 64), 32);
	/* "0,2,4,...,62": cut to 7 characters, full length returned. */
	cr_assert_eq(msga__cpulist_format(set, 64, buf, sizeof(buf)),
		     5 + 27 * 2 + 31);
	cr_assert_str_eq(buf, "0,2,4,6");
	cr_assert_eq(msga__cpulist_format(set, 64, NULL, 0),
		     5 + 27 * 2 + 31);
	cr_assert_eq(msga__cpulist_format(set, 64, buf, 1), 90);
	cr_assert_str_eq(buf, "");
}

/* msga_cpu --apply-irq-affinity's rule (lib/proto/irq_affinity.c). */
static void set_of(const char *list, uint64_t *set)
{
	cr_assert_geq(msga__cpulist_parse(list, strlen(list), set, 256), 0,
		      "%s", list);
}

static void expect_away(const char *aff, const char *poll,
			const char *online, int ret, const char *want)
{
	uint64_t a[4], p[4], o[4], out[4];
	char buf[64];

	set_of(aff, a);
	set_of(poll, p);
	set_of(online, o);
	cr_expect_eq(msga__irq_affinity_away(a, p, o, 256, out), ret,
		     "%s less %s", aff, poll);
	msga__cpulist_format(out, 256, buf, sizeof(buf));
	cr_expect_str_eq(buf, want, "%s less %s", aff, poll);
}

Test(irq_affinity, away_from_pollers)
{
	/* Not on a poller: unchanged. */
	expect_away("0-1", "2", "0-3", 0, "0-1");
	/* Spread over some: those less the poller. */
	expect_away("0-3", "1", "0-3", 1, "0,2-3");
	expect_away("0-3,64-67", "1,65", "0-127", 1, "0,2-3,64,66-67");
	/* On the poller alone: every other online CPU. */
	expect_away("1", "1", "0-3", 1, "0,2-3");
	expect_away("200", "200", "0-1,200-201", 1, "0-1,201");
	/* Every online CPU polls: nowhere to go. */
	expect_away("0", "0-1", "0-1", -ENOSPC, "");
}
