/* SPDX-License-Identifier: MIT */
/*
 * rx_clock.h - the clock behind msga_msg.rx_time_ns: CLOCK_MONOTONIC in
 * ns, read through the CPU's time-stamp counter when the kernel itself
 * reads CLOCK_MONOTONIC through it (its clocksource is "tsc").
 *
 * Why: every delivered message is stamped when it is polled, on the
 * latency path. clock_gettime() costs ~30 ns on a bare x86 host and
 * 100-150 ns in the test VM (measured), a TSC read ~12 ns in both. The
 * kernel's own vDSO does the same arithmetic we do here: ticks since an
 * anchor, times a rate.
 *
 * How it stays CLOCK_MONOTONIC: an anchor pairs a TSC read with a
 * clock_gettime() taken between two TSC reads, and is only taken when
 * those two are close (a pair the scheduler split would skew every stamp
 * made from it); "close" is a few times the tightest pair seen, and a
 * rate whose span began at a pair wider than that is measured again. A
 * stamp extrapolates from the anchor for at most MSGA__RX_CLOCK_REACH_NS;
 * the first stamp after that reads the kernel's clock again and
 * re-anchors. The rate is measured against CLOCK_MONOTONIC itself, first
 * over MSGA__RX_CLOCK_CAL_NS, then every MSGA__RX_CLOCK_RATE_NS over the
 * last such span, so it follows NTP's frequency corrections. Until the
 * first rate exists, and whenever the clocksource is not the TSC (checked
 * again with each new rate), every stamp is a clock_gettime(). Stamps
 * never go backwards.
 *
 * Error: a pair is uncertain by its gap, ~100 ns in the test VM. The rate
 * over a second is then known to ~2e-7, so 10 ms of extrapolation is off
 * by a few ns; in a context's first second, with the rate from 20 ms, by
 * up to ~0.1 us, plus the anchor's own ~50 ns.
 *
 * Pure logic apart from the clock reads: msga__rx_clock_anchor and
 * msga__rx_clock_extrapolate take the readings as arguments, so
 * test_rx_clock.c drives them with made-up ones.
 */
#ifndef MSGA_RX_CLOCK_H
#define MSGA_RX_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define MSGA__HAVE_TSC 1
#else
#define MSGA__HAVE_TSC 0
#endif

#define MSGA__RX_CLOCK_REACH_NS 10000000ull   /* 10 ms from an anchor */
#define MSGA__RX_CLOCK_CAL_NS 20000000ull     /* first rate: over 20 ms */
#define MSGA__RX_CLOCK_RATE_NS 1000000000ull  /* then over each second */

struct msga__rx_clock {
	uint64_t tsc0, ns0;      /* anchor */
	uint64_t reach;          /* ticks past tsc0 we extrapolate; 0: none */
	uint64_t mult;           /* ns per tick, 32.32 fixed point; 0: none */
	uint64_t rate_tsc, rate_ns; /* start of the span the rate comes from */
	uint64_t last;           /* the latest stamp handed out */
	uint64_t last_held;      /* the latest holdable delivery's stamp */
	uint64_t best_gap;       /* the tightest pair of TSC reads seen */
	uint64_t rate_gap;       /* the pair at rate_tsc's */
	int tsc_ok;              /* the kernel's clocksource is the TSC */
};

/* CLOCK_MONOTONIC in ns, from the kernel. */
static inline uint64_t msga__mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Whether CLOCK_MONOTONIC time now has reached deadline at. Signed, so
 * that a deadline computed from a receive stamp, which may run a hair
 * ahead of a later clock_gettime(), is "not yet" rather than long past.
 * Every timeout counted from a receive stamp goes through this.
 */
static inline int msga__time_reached(uint64_t now, uint64_t at)
{
	return (int64_t)(now - at) >= 0;
}

static inline uint64_t msga__tsc(void)
{
#if MSGA__HAVE_TSC
	return __rdtsc();
#else
	return 0;
#endif
}

/* Start with no anchor and no rate; tsc_ok says whether ever to use one. */
void msga__rx_clock_init(struct msga__rx_clock *c, int tsc_ok);

/*
 * A new anchor: TSC reading tsc, taken together with CLOCK_MONOTONIC
 * reading ns. Sets the first rate once the span since the first anchor
 * reaches MSGA__RX_CLOCK_CAL_NS, and a new one every
 * MSGA__RX_CLOCK_RATE_NS. Returns 1 when it set a rate.
 */
int msga__rx_clock_anchor(struct msga__rx_clock *c, uint64_t tsc,
			  uint64_t ns);

/*
 * The stamp for TSC reading tsc, or 0 when it is beyond the anchor's reach
 * (or before it, or there is no rate): then read the kernel's clock.
 */
static inline uint64_t
msga__rx_clock_extrapolate(const struct msga__rx_clock *c, uint64_t tsc)
{
	uint64_t d = tsc - c->tsc0;

	if (d >= c->reach)
		return 0;
	return c->ns0 + (uint64_t)(((unsigned __int128)d * c->mult) >> 32);
}

/* The slow path: clock_gettime(), a new anchor, the stamp (rx_clock.c). */
uint64_t msga__rx_clock_read(struct msga__rx_clock *c);

/* A receive timestamp: CLOCK_MONOTONIC ns, never below an earlier one. */
static inline uint64_t msga__rx_clock_now(struct msga__rx_clock *c)
{
	uint64_t t = msga__rx_clock_extrapolate(c, msga__tsc());

	if (!t)
		return msga__rx_clock_read(c);
	if (t < c->last)
		return c->last;
	c->last = t;
	return t;
}

/*
 * The stamp of a delivery the application may hold, from the receive
 * stamp now: strictly after every earlier such stamp of this clock's
 * context, so that a stamp names one delivery (hold.h). Messages polled
 * together get now, now + 1, ...: a few ns, far inside a stamp's error.
 */
static inline uint64_t msga__rx_clock_unique(struct msga__rx_clock *c,
					     uint64_t now)
{
	if (now <= c->last_held)
		now = c->last_held + 1;
	c->last_held = now;
	return now;
}

/* Whether the kernel reads CLOCK_MONOTONIC through the TSC, now. */
int msga__clocksource_is_tsc(void);

#endif /* MSGA_RX_CLOCK_H */
