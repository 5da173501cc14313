/* SPDX-License-Identifier: MIT */
/*
 * cpu_snap.c - /proc/interrupts and /proc/softirqs snapshots around a
 * noise measurement (cpu_snap.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu_snap.h"
#include "cpu_topo.h"

#define IRQ_ROWS_SPARE 256u

uint32_t msga__cpu_snap_rows(void)
{
	size_t len, lines = 0;
	char *text = msga__sys_slurp("/proc/interrupts", &len);

	for (size_t i = 0; text && i < len; i++)
		lines += text[i] == '\n';
	free(text);
	lines += IRQ_ROWS_SPARE;
	return lines > MSGA__IRQ_ROWS_MAX ? MSGA__IRQ_ROWS_MAX :
					    (uint32_t)lines;
}

uint32_t msga__cpu_snap_cpus(void)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);

	return conf < 1 ? 1 : conf > MSGA__CPU_MAX ? MSGA__CPU_MAX :
						     (uint32_t)conf;
}

int msga__cpu_snap_init(struct msga__cpu_snap *s, uint32_t ncpus,
			uint32_t rows)
{
	int ret = msga__irq_table_init(&s->irq, ncpus, rows);

	if (!ret)
		ret = msga__irq_table_init(&s->soft, ncpus,
					   MSGA__SOFTIRQ_ROWS);
	s->ok = 0;
	return ret;
}

void msga__cpu_snap_fini(struct msga__cpu_snap *s)
{
	msga__irq_table_fini(&s->irq);
	msga__irq_table_fini(&s->soft);
}

static int parse_proc(struct msga__irq_table *t, const char *path)
{
	size_t len;
	char *text = msga__sys_slurp(path, &len);
	int ret;

	if (!text)
		return -errno;
	ret = msga__irq_parse(t, text, len);
	free(text);
	return ret;
}

void msga__cpu_snap_take(struct msga__cpu_snap *s)
{
	s->ok = parse_proc(&s->irq, "/proc/interrupts") >= 0 &&
		parse_proc(&s->soft, "/proc/softirqs") >= 0;
}

int msga__cpu_snap_diff(struct msga__irq_table *d,
			struct msga__irq_table *dsoft,
			const struct msga__cpu_snap *before,
			const struct msga__cpu_snap *after)
{
	if (!before->ok || !after->ok ||
	    msga__irq_diff(d, &before->irq, &after->irq) ||
	    msga__irq_diff(dsoft, &before->soft, &after->soft))
		return -1;
	return 0;
}

int64_t msga__cpu_snap_took(const struct msga__irq_table *d,
			    const struct msga__irq_table *dsoft, uint32_t cpu)
{
	int col = msga__irq_col(d, cpu), scol = msga__irq_col(dsoft, cpu);

	if (col < 0 || scol < 0)
		return -1;
	return (int64_t)(msga__irq_col_total(d, (uint32_t)col) +
			 msga__irq_col_total(dsoft, (uint32_t)scol));
}
