/* SPDX-License-Identifier: MIT */
/*
 * irq_parse.h - /proc/interrupts and /proc/softirqs text in a bounded
 * table (issue 38, msga_cpu): which CPU took how many of each interrupt,
 * the difference of two snapshots, and the rows that belong to a device.
 *
 * Both files share one grammar, which one parser reads:
 *
 *   a header of "CPUn" words, one per online CPU: the numbers rise but
 *   may have gaps (an offline CPU has no column);
 *   rows "NAME: COUNT... [TEXT]", NAME an IRQ number ("  36") or a word
 *   ("LOC", "NET_RX"), one count per column, then for an IRQ its chip,
 *   hardware IRQ and trigger, and its actions' names ("PCI-MSIX-0000:
 *   00:02.0 1-edge virtio1-req.0"), for a word a description ("Local
 *   timer interrupts"); /proc/softirqs has no text;
 *   "ERR: N" and "MIS: N": one count for the whole machine, not per CPU.
 *
 * The counts are the kernel's unsigned int and wrap at 2^32; a difference
 * (msga__irq_diff) allows for one wrap. The text is local, not a peer's,
 * but the parser is fuzzed (tests/fuzz/fuzz_irq_parse.c) as if it were:
 * it reads only text[0, len), needs no NUL and never writes past the
 * limits set at init. A header with more CPUs than the table holds is an
 * error; rows past the table's limit are counted (rows_dropped), and so
 * are lines that fit no rule (lines_bad; a second row of the same name is
 * one), so one odd line of an odd architecture costs that line, not the
 * snapshot.
 *
 * Pure: the caller reads the files (and /proc/irq/N/smp_affinity_list,
 * whose text cpulist.h parses). Tested on the host (tests/test_irq_parse.c,
 * from captures in tests/data/).
 */
#ifndef MSGA_IRQ_PARSE_H
#define MSGA_IRQ_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Limits of a table, checked at init. */
#define MSGA__IRQ_CPUS_MAX 8192u
#define MSGA__IRQ_ROWS_MAX 65536u
/* A row's name ("LOC", "123456", "IRQ_POLL") and text, NUL included. */
#define MSGA__IRQ_NAME_MAX 16u
#define MSGA__IRQ_TEXT_MAX 160u

/* Row flags. */
enum {
	/* One count for the whole machine ("ERR", "MIS"): counts[] are 0,
	 * total is the count. */
	MSGA__IRQ_ROW_GLOBAL = 1 << 0,
	/* The text was longer than MSGA__IRQ_TEXT_MAX - 1 and is cut. */
	MSGA__IRQ_ROW_TEXT_CUT = 1 << 1,
};

struct msga__irq_row {
	char name[MSGA__IRQ_NAME_MAX];
	/* After the counts, blanks squeezed to one space, trimmed. */
	char text[MSGA__IRQ_TEXT_MAX];
	int32_t irq;          /* NAME as a number, or -1 for a word */
	uint32_t flags;       /* MSGA__IRQ_ROW_* */
	uint64_t total;       /* the sum over the CPUs */
	uint64_t *counts;     /* one per column: ncpus of them */
};

struct msga__irq_table {
	uint32_t max_cpus, max_rows;   /* set at init */
	uint32_t ncpus;                /* columns of the last parse */
	uint32_t nrows;
	uint32_t *cpu;                 /* column -> CPU number */
	struct msga__irq_row *rows;
	uint64_t *count_mem;           /* max_rows x max_cpus */
	uint32_t rows_dropped;         /* rows past max_rows */
	uint32_t lines_bad;            /* lines that fit no rule */
};

/*
 * Make t hold up to max_cpus columns and max_rows rows (1 to
 * MSGA__IRQ_CPUS_MAX, 1 to MSGA__IRQ_ROWS_MAX; else -EINVAL). Returns 0,
 * -EINVAL, or -ENOMEM. msga__irq_table_fini() frees what init took (and is
 * safe on a zeroed or failed table).
 */
int msga__irq_table_init(struct msga__irq_table *t, uint32_t max_cpus,
			 uint32_t max_rows);
void msga__irq_table_fini(struct msga__irq_table *t);

/*
 * Parse a whole /proc/interrupts or /proc/softirqs text[0, len) into t,
 * replacing what it held. Returns the number of rows kept, or -EINVAL (no
 * header, a header word that is not "CPUn", CPU numbers not rising) or
 * -E2BIG (more CPU columns than max_cpus). After an error t holds no rows.
 */
int msga__irq_parse(struct msga__irq_table *t, const char *text, size_t len);

/* The column of CPU cpu in t, or -1 if t has none. */
int msga__irq_col(const struct msga__irq_table *t, uint32_t cpu);

/* The row named name ("LOC", "36", "NET_RX") in t, or NULL. */
const struct msga__irq_row *msga__irq_row(const struct msga__irq_table *t,
					  const char *name);

/*
 * out = after - before, row by row (rows matched by name) and CPU by CPU
 * (columns matched by CPU number): out takes after's rows and columns; a
 * row or CPU that before lacks counts from 0 (a device that came up, a
 * CPU that came online). A count below its earlier value wrapped once at
 * 2^32 if the earlier value fits in 32 bits (the kernel's counters), else
 * counts from 0. out must be a table of its own, with max_cpus and
 * max_rows at least after's ncpus and nrows (else -E2BIG). Returns 0.
 */
int msga__irq_diff(struct msga__irq_table *out,
		   const struct msga__irq_table *before,
		   const struct msga__irq_table *after);

/* The sum of column col over all rows of t (0 for a bad column). */
uint64_t msga__irq_col_total(const struct msga__irq_table *t, uint32_t col);

/*
 * 1 if key (a network device "eth0", an interrupt name prefix
 * "mlx5_comp", a PCI address "0000:3b:00.0", "virtio3") appears in the
 * row's text as a whole word: what precedes it is the start or a
 * character other than a letter, digit or '_', and so is what follows
 * (so "eth0" matches "eth0-TxRx-0" and "i40e-eth0-TxRx-1" but not
 * "eth01"; "0000:3b:00.0" matches "mlx5_comp0@pci:0000:3b:00.0" and the
 * chip "PCI-MSIX-0000:3b:00.0"). A key ending in '_' or a digit that is
 * meant as a prefix ("mlx5_comp") must be matched with prefix set: then
 * anything may follow. An empty key matches nothing.
 */
int msga__irq_row_matches(const struct msga__irq_row *row, const char *key,
			  int prefix);

#endif
