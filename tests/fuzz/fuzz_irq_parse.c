/* SPDX-License-Identifier: MIT */
/*
 * fuzz_irq_parse.c - the /proc/interrupts and /proc/softirqs parser
 * (lib/proto/irq_parse.c), the difference of two snapshots, and the CPU
 * list text (lib/proto/cpulist.c), fed any text. The text is the
 * kernel's, not a peer's, but the parser reads a line per IRQ on
 * machines no test has, and one odd architecture must cost a line, not
 * a write past a table.
 *
 * Input: byte 0 is the table's CPU limit (1 to 16), byte 1 its row limit
 * (1 to 16), bytes 2-3 where the text splits into two snapshots (before,
 * after), byte 4 the CPU list's size in bits (0 to 255); the rest is the
 * text. Each part is parsed from an exact-size heap copy (no NUL after
 * it), so AddressSanitizer sees a read past it. Checked: the limits hold,
 * CPU numbers rise, names and texts are clean strings, a row's total is
 * its counts' sum (a global row has none), the difference has after's
 * shape and undoes before where nothing wrapped, the first word of a
 * row's text matches the row, and a CPU list written back reads the same.
 */
#include <errno.h>
#include <string.h>

#include "cpulist.h"
#include "irq_parse.h"
#include "fuzz.h"

static int word_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '_';
}

static void check_row(const struct msga__irq_table *t,
		      const struct msga__irq_row *r)
{
	size_t n = strnlen(r->name, sizeof(r->name));
	size_t tn = strnlen(r->text, sizeof(r->text));
	uint64_t sum = 0;
	char first[MSGA__IRQ_TEXT_MAX];

	FUZZ_CHECK(n > 0 && n < sizeof(r->name));
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(word_char(r->name[i]));
	FUZZ_CHECK(tn < sizeof(r->text));
	for (size_t i = 0; i < tn; i++)
		FUZZ_CHECK((unsigned char)r->text[i] >= 0x20 &&
			   r->text[i] != 0x7f && r->text[i] != '\t');
	FUZZ_CHECK(!tn || (r->text[0] != ' ' && r->text[tn - 1] != ' '));
	FUZZ_CHECK(!strstr(r->text, "  "));
	for (uint32_t c = 0; c < t->ncpus; c++) {
		FUZZ_CHECK(!(r->flags & MSGA__IRQ_ROW_GLOBAL) || !r->counts[c]);
		sum += r->counts[c];
	}
	FUZZ_CHECK((r->flags & MSGA__IRQ_ROW_GLOBAL) || sum == r->total);
	FUZZ_CHECK(r->irq >= -1);
	if (tn) {
		size_t k = strcspn(r->text, " ");

		memcpy(first, r->text, k);
		first[k] = '\0';
		FUZZ_CHECK(msga__irq_row_matches(r, first, 1));
		FUZZ_CHECK(msga__irq_row_matches(r, first, 0));
	}
	FUZZ_CHECK(!msga__irq_row_matches(r, "", 1));
}

static void check_table(const struct msga__irq_table *t, int ret)
{
	FUZZ_CHECK(ret == -EINVAL || ret == -E2BIG || ret >= 0);
	FUZZ_CHECK(ret < 0 ? !t->nrows : (uint32_t)ret == t->nrows);
	FUZZ_CHECK(t->nrows <= t->max_rows && t->ncpus <= t->max_cpus);
	FUZZ_CHECK(ret < 0 || t->ncpus > 0);
	for (uint32_t c = 1; c < t->ncpus; c++)
		FUZZ_CHECK(t->cpu[c] > t->cpu[c - 1]);
	for (uint32_t c = 0; c < t->ncpus; c++)
		FUZZ_CHECK(msga__irq_col(t, t->cpu[c]) == (int)c);
	for (uint32_t i = 0; i < t->nrows; i++) {
		check_row(t, &t->rows[i]);
		FUZZ_CHECK(msga__irq_row(t, t->rows[i].name));
	}
}

static int parse_part(struct msga__irq_table *t, const uint8_t *p, size_t n)
{
	char *text = n ? fuzz_dup(p, n) : NULL;
	int ret = msga__irq_parse(t, text, n);

	check_table(t, ret);
	free(text);
	return ret;
}

/* Where nothing wrapped and both snapshots have the cell: after - before. */
static void check_diff(const struct msga__irq_table *d,
		       const struct msga__irq_table *a,
		       const struct msga__irq_table *b)
{
	FUZZ_CHECK(d->nrows == b->nrows && d->ncpus == b->ncpus);
	for (uint32_t i = 0; i < d->nrows; i++) {
		const struct msga__irq_row *old;

		old = msga__irq_row(a, b->rows[i].name);
		FUZZ_CHECK(!strcmp(d->rows[i].name, b->rows[i].name));
		FUZZ_CHECK(!strcmp(d->rows[i].text, b->rows[i].text));
		for (uint32_t c = 0; c < d->ncpus; c++) {
			int ac = msga__irq_col(a, b->cpu[c]);
			uint64_t now = b->rows[i].counts[c];

			FUZZ_CHECK(d->cpu[c] == b->cpu[c]);
			if (!old || ac < 0)
				FUZZ_CHECK(d->rows[i].counts[c] == now);
			else if (old->counts[ac] <= now)
				FUZZ_CHECK(d->rows[i].counts[c] ==
					   now - old->counts[ac]);
		}
	}
}

static void fuzz_snapshots(uint32_t max_cpus, uint32_t max_rows,
			   const uint8_t *p, size_t n, size_t split)
{
	struct msga__irq_table a, b, d;
	int ra, rb;

	FUZZ_CHECK(!msga__irq_table_init(&a, max_cpus, max_rows));
	FUZZ_CHECK(!msga__irq_table_init(&b, max_cpus, max_rows));
	FUZZ_CHECK(!msga__irq_table_init(&d, max_cpus, max_rows));
	ra = parse_part(&a, p, split);
	rb = parse_part(&b, p + split, n - split);
	if (ra >= 0 && rb >= 0) {
		FUZZ_CHECK(!msga__irq_diff(&d, &a, &b));
		check_diff(&d, &a, &b);
		/* A snapshot against itself: all zero. */
		FUZZ_CHECK(!msga__irq_diff(&d, &b, &b));
		for (uint32_t i = 0; i < d.nrows; i++)
			FUZZ_CHECK(!d.rows[i].total);
	}
	msga__irq_table_fini(&a);
	msga__irq_table_fini(&b);
	msga__irq_table_fini(&d);
}

static void fuzz_cpulist(const uint8_t *p, size_t n, uint32_t nbits)
{
	uint64_t set[4], back[4];
	char *text = n ? fuzz_dup(p, n) : NULL;
	char buf[1024];
	size_t len;
	int ret = msga__cpulist_parse(text, n, set, nbits);

	FUZZ_CHECK(ret == -EINVAL || ret == -ERANGE ||
		   (ret >= 0 && (uint32_t)ret <= nbits));
	if (ret >= 0) {
		FUZZ_CHECK(msga__cpuset_count(set, nbits) == (uint32_t)ret);
		len = msga__cpulist_format(set, nbits, buf, sizeof(buf));
		FUZZ_CHECK(len < sizeof(buf) && strlen(buf) == len);
		FUZZ_CHECK(msga__cpulist_parse(buf, len, back, nbits) == ret);
		FUZZ_CHECK(!memcmp(set, back,
				   MSGA__CPUSET_WORDS(nbits) * sizeof(*set)));
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint32_t max_cpus = (uint32_t)fuzz_range(&in, 1, 16);
	uint32_t max_rows = (uint32_t)fuzz_range(&in, 1, 16);
	size_t split = fuzz_u16(&in);
	uint32_t nbits = fuzz_u8(&in);
	size_t n = fuzz_left(&in);

	split = split < n ? split : n;
	fuzz_snapshots(max_cpus, max_rows, in.p, n, split);
	fuzz_cpulist(in.p, n, nbits);
	return 0;
}
