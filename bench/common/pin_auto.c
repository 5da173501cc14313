/* SPDX-License-Identifier: MIT */
/* pin_auto.c - the tools' --pin auto and its report (pin_auto.h). */
#include "pin_auto.h"

int pin_auto_pick(struct msga_cpu_choice *c, const uint32_t *avoid,
		  uint32_t navoid, int pin)
{
	struct msga_cpu_pick_attr a = {
		.size = sizeof(a),
		.flags = pin ? MSGA_CPU_PICK_PIN : 0,
		.duration_ms = PIN_AUTO_MS,
		.avoid = avoid,
		.navoid = navoid,
	};

	c->size = sizeof(*c);
	return msga_cpu_pick(&a, c);
}

void pin_auto_json(FILE *f, int cpu, const struct msga_cpu_choice *c)
{
	fprintf(f, "\"cpu\":%d,\"cpu_noise\":", cpu);
	if (!c) {
		fprintf(f, "null,");
		return;
	}
	fprintf(f, "{\"measured_cpus\":%u,\"rank\":%u,\"run_ns\":%llu,"
		"\"gaps\":%llu,\"gaps_per_s\":%llu,\"max_gap_ns\":%llu,"
		"\"stolen_ppm\":%llu,\"irqs\":%lld,\"shared_core\":%s},",
		c->measured, c->rank, (unsigned long long)c->run_ns,
		(unsigned long long)c->gaps, (unsigned long long)c->gaps_per_s,
		(unsigned long long)c->max_gap_ns,
		(unsigned long long)c->stolen_ppm,
		c->irqs == UINT64_MAX ? -1ll : (long long)c->irqs,
		c->flags & MSGA_CPU_CHOICE_SHARED_CORE ? "true" : "false");
}

void pin_auto_text(FILE *f, int cpu, const struct msga_cpu_choice *c,
		   const char *how)
{
	if (!c) {
		fprintf(f, "CPU %d (%s)", cpu, how);
		return;
	}
	fprintf(f, "CPU %d (--pin auto, quietest of %u%s: stolen %.4f %%, %llu gaps/s, largest %.1f us)",
		cpu, c->measured,
		c->flags & MSGA_CPU_CHOICE_SHARED_CORE ? ", core shared" : "",
		c->stolen_ppm / 1e4, (unsigned long long)c->gaps_per_s,
		c->max_gap_ns / 1e3);
}
