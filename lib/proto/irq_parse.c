/* SPDX-License-Identifier: MIT */
/*
 * irq_parse.c - /proc/interrupts and /proc/softirqs in a bounded table
 * (irq_parse.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "irq_parse.h"

/* The kernel prints unsigned int (10 digits); 18 cannot overflow. */
#define COUNT_DIGITS_MAX 18
/* "CPU8191": a CPU number of at most 7 digits. */
#define CPU_DIGITS_MAX 7

struct span {
	const char *p;
	size_t n;
};

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_word(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '_';
}

int msga__irq_table_init(struct msga__irq_table *t, uint32_t max_cpus,
			 uint32_t max_rows)
{
	memset(t, 0, sizeof(*t));
	if (!max_cpus || max_cpus > MSGA__IRQ_CPUS_MAX || !max_rows ||
	    max_rows > MSGA__IRQ_ROWS_MAX)
		return -EINVAL;
	t->cpu = calloc(max_cpus, sizeof(*t->cpu));
	t->rows = calloc(max_rows, sizeof(*t->rows));
	t->count_mem = calloc((size_t)max_cpus * max_rows,
			      sizeof(*t->count_mem));
	if (!t->cpu || !t->rows || !t->count_mem) {
		msga__irq_table_fini(t);
		return -ENOMEM;
	}
	t->max_cpus = max_cpus;
	t->max_rows = max_rows;
	for (uint32_t i = 0; i < max_rows; i++)
		t->rows[i].counts = t->count_mem + (size_t)i * max_cpus;
	return 0;
}

void msga__irq_table_fini(struct msga__irq_table *t)
{
	free(t->cpu);
	free(t->rows);
	free(t->count_mem);
	memset(t, 0, sizeof(*t));
}

/* The next blank-separated word of s (s advances past it). */
static struct span next_word(struct span *s)
{
	struct span w;

	while (s->n && is_blank(*s->p)) {
		s->p++;
		s->n--;
	}
	w.p = s->p;
	while (s->n && !is_blank(*s->p)) {
		s->p++;
		s->n--;
	}
	w.n = (size_t)(s->p - w.p);
	return w;
}

/* w as a decimal number of at most max digits, or -1. */
static int64_t word_num(struct span w, size_t max)
{
	int64_t v = 0;

	if (!w.n || w.n > max)
		return -1;
	for (size_t i = 0; i < w.n; i++) {
		if (!is_digit(w.p[i]))
			return -1;
		v = v * 10 + (w.p[i] - '0');
	}
	return v;
}

/* The header: "CPUn" words, n rising. */
static int parse_header(struct msga__irq_table *t, struct span line)
{
	for (;;) {
		struct span w = next_word(&line);
		int64_t cpu;

		if (!w.n)
			break;
		if (w.n < 4 || memcmp(w.p, "CPU", 3))
			return -EINVAL;
		w.p += 3;
		w.n -= 3;
		cpu = word_num(w, CPU_DIGITS_MAX);
		if (cpu < 0 || (t->ncpus && cpu <= t->cpu[t->ncpus - 1]))
			return -EINVAL;
		if (t->ncpus == t->max_cpus)
			return -E2BIG;
		t->cpu[t->ncpus++] = (uint32_t)cpu;
	}
	return t->ncpus ? 0 : -EINVAL;
}

/*
 * s, blanks squeezed to one space and trimmed, into row->text; cut at a
 * word's end or inside the word that does not fit, never after a space.
 */
static void copy_text(struct msga__irq_row *row, struct span s)
{
	const size_t cap = MSGA__IRQ_TEXT_MAX - 1;
	size_t n = 0, i;
	struct span w;

	while ((w = next_word(&s)).n) {
		if (n && n + 2 > cap)
			goto cut;
		if (n)
			row->text[n++] = ' ';
		for (i = 0; i < w.n && n < cap; i++) {
			unsigned char c = (unsigned char)w.p[i];

			/* A clean C string whatever the bytes were. */
			row->text[n++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
		}
		if (i < w.n)
			goto cut;
	}
	row->text[n] = '\0';
	return;
cut:
	row->flags |= MSGA__IRQ_ROW_TEXT_CUT;
	row->text[n] = '\0';
}

/* "NAME:" at the start of line: the name, line advanced past the ':'. */
static int row_name(struct span *line, struct span *name)
{
	struct span s = *line;

	while (s.n && is_blank(*s.p)) {
		s.p++;
		s.n--;
	}
	name->p = s.p;
	while (s.n && is_word(*s.p)) {
		s.p++;
		s.n--;
	}
	name->n = (size_t)(s.p - name->p);
	if (!name->n || name->n >= MSGA__IRQ_NAME_MAX || !s.n || *s.p != ':')
		return -EINVAL;
	line->p = s.p + 1;
	line->n = s.n - 1;
	return 0;
}

static void keep_row(struct msga__irq_table *t, struct span name,
		     const uint64_t *counts, uint32_t k, struct span rest)
{
	struct msga__irq_row *row = &t->rows[t->nrows++];
	int64_t irq = word_num(name, 9);

	memcpy(row->name, name.p, name.n);
	row->name[name.n] = '\0';
	row->irq = irq < 0 ? -1 : (int32_t)irq;
	row->flags = k < t->ncpus ? MSGA__IRQ_ROW_GLOBAL : 0;
	row->total = 0;
	for (uint32_t c = 0; c < t->ncpus; c++)
		row->counts[c] = k < t->ncpus ? 0 : counts[c];
	for (uint32_t c = 0; c < k; c++)
		row->total += counts[c];
	copy_text(row, rest);
}

/* A row named name is in t already (names are unique in a table). */
static int has_row(const struct msga__irq_table *t, struct span name)
{
	for (uint32_t i = 0; i < t->nrows; i++)
		if (!strncmp(t->rows[i].name, name.p, name.n) &&
		    !t->rows[i].name[name.n])
			return 1;
	return 0;
}

/*
 * One row: its counts go to counts[] (room for ncpus) first, since a line
 * is only kept once it is whole.
 */
static void parse_row(struct msga__irq_table *t, struct span line,
		      uint64_t *counts)
{
	struct span name, rest, w;
	uint32_t k = 0;
	int64_t v;

	if (row_name(&line, &name))
		goto bad;
	for (;;) {
		rest = line;
		w = next_word(&line);
		v = k < t->ncpus ? word_num(w, COUNT_DIGITS_MAX) : -1;
		if (v < 0)
			break;
		counts[k++] = (uint64_t)v;
	}
	/* ERR and MIS: one count and nothing after it. */
	if (!k || (k < t->ncpus && (k > 1 || w.n)))
		goto bad;
	if (has_row(t, name))
		goto bad;
	if (t->nrows == t->max_rows) {
		t->rows_dropped++;
		return;
	}
	keep_row(t, name, counts, k, rest);
	return;
bad:
	t->lines_bad++;
}

/* The next line of *s, without its '\n'. */
static struct span next_line(struct span *s)
{
	const char *nl = memchr(s->p, '\n', s->n);
	struct span line = { s->p, nl ? (size_t)(nl - s->p) : s->n };

	s->p += line.n + (nl != NULL);
	s->n -= line.n + (nl != NULL);
	return line;
}

static int blank_line(struct span line)
{
	return !next_word(&line).n;
}

int msga__irq_parse(struct msga__irq_table *t, const char *text, size_t len)
{
	struct span s = { text, len }, line = { text, 0 };
	uint64_t *counts;
	int ret;

	t->ncpus = t->nrows = t->rows_dropped = t->lines_bad = 0;
	while (s.n && blank_line(line = next_line(&s)))
		;
	ret = parse_header(t, line);
	if (ret) {
		t->ncpus = 0;
		return ret;
	}
	counts = malloc(t->ncpus * sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	while (s.n) {
		line = next_line(&s);
		if (!blank_line(line))
			parse_row(t, line, counts);
	}
	free(counts);
	return (int)t->nrows;
}

int msga__irq_col(const struct msga__irq_table *t, uint32_t cpu)
{
	for (uint32_t c = 0; c < t->ncpus; c++)
		if (t->cpu[c] == cpu)
			return (int)c;
	return -1;
}

/* The row of t named name, trying index hint first (snapshots of one
 * machine list their rows in the same order). */
static const struct msga__irq_row *find_row(const struct msga__irq_table *t,
					    const char *name, uint32_t hint)
{
	if (hint < t->nrows && !strcmp(t->rows[hint].name, name))
		return &t->rows[hint];
	for (uint32_t i = 0; i < t->nrows; i++)
		if (!strcmp(t->rows[i].name, name))
			return &t->rows[i];
	return NULL;
}

const struct msga__irq_row *msga__irq_row(const struct msga__irq_table *t,
					  const char *name)
{
	return find_row(t, name, 0);
}

/* a - b for the kernel's unsigned int counters, which wrap. */
static uint64_t delta(uint64_t b, uint64_t a)
{
	if (a >= b)
		return a - b;
	return b <= UINT32_MAX ? a + (1ull << 32) - b : a;
}

/* One row of out from after's row r and before's row old (or NULL). */
static void diff_row(struct msga__irq_table *out,
		     const struct msga__irq_table *before,
		     const struct msga__irq_row *old,
		     const struct msga__irq_row *r, uint32_t i)
{
	struct msga__irq_row *o = &out->rows[i];
	uint32_t bc = 0;

	memcpy(o->name, r->name, sizeof(o->name));
	memcpy(o->text, r->text, sizeof(o->text));
	o->irq = r->irq;
	o->flags = r->flags;
	o->total = 0;
	/* Both headers rise: walk the columns together. */
	for (uint32_t c = 0; c < out->ncpus; c++) {
		while (old && bc < before->ncpus &&
		       before->cpu[bc] < out->cpu[c])
			bc++;
		o->counts[c] = old && bc < before->ncpus &&
				       before->cpu[bc] == out->cpu[c] ?
				       delta(old->counts[bc], r->counts[c]) :
				       r->counts[c];
		o->total += o->counts[c];
	}
	if (r->flags & MSGA__IRQ_ROW_GLOBAL)
		o->total = old ? delta(old->total, r->total) : r->total;
}

int msga__irq_diff(struct msga__irq_table *out,
		   const struct msga__irq_table *before,
		   const struct msga__irq_table *after)
{
	if (out->max_cpus < after->ncpus || out->max_rows < after->nrows)
		return -E2BIG;
	out->ncpus = after->ncpus;
	out->nrows = after->nrows;
	out->rows_dropped = after->rows_dropped;
	out->lines_bad = after->lines_bad;
	memcpy(out->cpu, after->cpu, after->ncpus * sizeof(*out->cpu));
	for (uint32_t i = 0; i < after->nrows; i++) {
		const struct msga__irq_row *r = &after->rows[i];

		diff_row(out, before, find_row(before, r->name, i), r, i);
	}
	return 0;
}

uint64_t msga__irq_col_total(const struct msga__irq_table *t, uint32_t col)
{
	uint64_t sum = 0;

	if (col >= t->ncpus)
		return 0;
	for (uint32_t i = 0; i < t->nrows; i++)
		sum += t->rows[i].counts[col];
	return sum;
}

int msga__irq_row_matches(const struct msga__irq_row *row, const char *key,
			  int prefix)
{
	size_t klen = strlen(key);
	const char *p = row->text;

	if (!klen)
		return 0;
	while ((p = strstr(p, key))) {
		int before_ok = p == row->text || !is_word(p[-1]);
		int after_ok = prefix || !is_word(p[klen]);

		if (before_ok && after_ok)
			return 1;
		p++;
	}
	return 0;
}
