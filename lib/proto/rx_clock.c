/* SPDX-License-Identifier: MIT */
/*
 * rx_clock.c - anchoring and rating the receive clock (rx_clock.h says
 * why and how), and asking the kernel which clocksource it uses.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "rx_clock.h"

void msga__rx_clock_init(struct msga__rx_clock *c, int tsc_ok)
{
	memset(c, 0, sizeof(*c));
	c->tsc_ok = tsc_ok && MSGA__HAVE_TSC;
}

int msga__rx_clock_anchor(struct msga__rx_clock *c, uint64_t tsc,
			  uint64_t ns)
{
	int rated = 0;

	if (!c->rate_tsc) {
		c->rate_tsc = tsc;
		c->rate_ns = ns;
	} else if (tsc > c->rate_tsc && ns > c->rate_ns &&
		   ns - c->rate_ns >= (c->mult ? MSGA__RX_CLOCK_RATE_NS :
						 MSGA__RX_CLOCK_CAL_NS)) {
		c->mult = (uint64_t)(((unsigned __int128)(ns - c->rate_ns)
				      << 32) / (tsc - c->rate_tsc));
		c->rate_tsc = tsc;
		c->rate_ns = ns;
		rated = 1;
	}
	c->tsc0 = tsc;
	c->ns0 = ns;
	/* (a TSC slower than 1 tick per 2^32 ns would give mult 0: no rate) */
	c->reach = c->tsc_ok && c->mult ?
		(uint64_t)(((unsigned __int128)MSGA__RX_CLOCK_REACH_NS << 32) /
			   c->mult) : 0;
	return rated;
}

/* The widest pair taken as good: a few times the tightest seen. */
static uint64_t pair_limit(const struct msga__rx_clock *c)
{
	return 4 * c->best_gap + 64;
}

/*
 * A TSC read, CLOCK_MONOTONIC, another TSC read: *tsc is the middle of the
 * two, and the pair is good when they are no further apart than
 * pair_limit (a preempted or interrupted pair is thousands of times
 * wider).
 */
static int read_pair(struct msga__rx_clock *c, uint64_t *tsc, uint64_t *ns,
		     uint64_t *gap)
{
	uint64_t before = msga__tsc();

	*ns = msga__mono_ns();
	*gap = msga__tsc() - before;
	*tsc = before + *gap / 2;
	if (!c->best_gap || *gap < c->best_gap)
		c->best_gap = *gap ? *gap : 1;
	return *gap <= pair_limit(c);
}

#define PAIR_TRIES 4

uint64_t msga__rx_clock_read(struct msga__rx_clock *c)
{
	uint64_t ns = 0, tsc = 0, gap = 0;
	int good = 0, rated;

	for (int i = 0; c->tsc_ok && !good && i < PAIR_TRIES; i++)
		good = read_pair(c, &tsc, &ns, &gap);
	if (!c->tsc_ok)
		ns = msga__mono_ns();
	if (good && c->rate_tsc && c->rate_gap > pair_limit(c)) {
		/* The span the rate is measured over started at a pair wider
		 * than we now know pairs can be (the very first one, taken
		 * before any tighter): measure it again from here. */
		c->rate_tsc = 0;
		c->mult = 0;
	}
	if (good) {
		rated = msga__rx_clock_anchor(c, tsc, ns);
		if (c->rate_tsc == tsc)
			c->rate_gap = gap;
		/* A new rate is the time to check that the kernel still
		 * trusts the TSC (its watchdog can switch away): about once
		 * a second. */
		if (rated && !msga__clocksource_is_tsc()) {
			c->tsc_ok = 0;
			c->reach = 0;
		}
	}
	if (ns < c->last)
		return c->last;
	c->last = ns;
	return ns;
}

int msga__clocksource_is_tsc(void)
{
	static const char path[] =
		"/sys/devices/system/clocksource/clocksource0/current_clocksource";
	char buf[16];
	ssize_t n;
	int fd;

	if (!MSGA__HAVE_TSC)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n == 4 && !memcmp(buf, "tsc\n", 4);
}
