/* SPDX-License-Identifier: MIT */
/*
 * last_value.h - a publisher's last value of each topic (issue 37, item
 * 4; since 0.12, MSGA_PUB_LAST_VALUE): a private copy of the last message
 * committed on each topic, with its sequence number, for subscribers that
 * join late and ask for it (msgaccel(7), LAST VALUE). Pure: no verbs; the
 * RC publisher (lib/rc/rc_pub.c) sends what it keeps, the tests are
 * test_last_value.c.
 *
 * Bounded: one message per topic, at most MSGA__LV_MAX bytes each (one
 * fragment: a last value goes out as one record), at most
 * MSGA_PUB_TOPICS_MAX topics, so at most about 4 MiB per publisher, and
 * only topics that were ever sent on cost anything (each entry is made on
 * its topic's first message and kept at its largest size so far). A
 * message larger than MSGA__LV_MAX forgets the topic's value: a
 * subscriber then gets no last value for it rather than a stale one.
 */
#ifndef MSGA_LAST_VALUE_H
#define MSGA_LAST_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "msgaccel.h"

#define MSGA__LV_MAX MSGA_FRAG_MAX

struct msga__lv_ent {
	uint64_t seq;     /* 0: none kept */
	uint32_t len;
	uint32_t cap;     /* bytes allocated after the entry */
	char data[];
};

struct msga__lv_store {
	struct msga__lv_ent *ent[MSGA_PUB_TOPICS_MAX];
};

/* An empty store (every topic without a value). */
void msga__lv_init(struct msga__lv_store *s);
/*
 * Message seq of len bytes was committed on topic: keep it (len at most
 * MSGA__LV_MAX), or forget the topic's value (a larger one). 0, -EINVAL
 * (topic out of range, seq 0), or -ENOMEM (the value is forgotten too:
 * never a stale one).
 */
int msga__lv_put(struct msga__lv_store *s, uint32_t topic, uint64_t seq,
		 const void *data, size_t len);
/* Topic's kept value, or NULL (none, or topic out of range). */
const struct msga__lv_ent *msga__lv_get(const struct msga__lv_store *s,
					uint32_t topic);
/* Free every entry; the store is empty again. */
void msga__lv_free(struct msga__lv_store *s);

/*
 * The subscriber's side, one per RC connection: a publisher sends a
 * topic's last value right after its name, before anything else of the
 * topic on that connection, once (rc_pub.c). So a LAST_VALUE record for
 * a topic whose data (live or a last value) was delivered already is a
 * replay of an old value by a hostile or broken publisher: refused, a
 * protocol error. One bit a topic, in the connection: no allocation,
 * and one OR on the hot path.
 */
struct msga__lv_gate {
	uint64_t shut[MSGA_PUB_TOPICS_MAX / 64]; /* 1: data of it delivered */
};

/*
 * Record a delivery on topic (below MSGA_PUB_TOPICS_MAX: the caller has
 * checked), a last value if lv: 1 to deliver it, 0 if it is a late or
 * second last value (refuse it: nothing is recorded).
 */
static inline int msga__lv_gate_pass(struct msga__lv_gate *g, uint32_t topic,
				     int lv)
{
	uint64_t bit = 1ull << (topic % 64);

	if (g->shut[topic / 64] & bit)
		return !lv;
	/* (set once: the live path only reads the word after that) */
	g->shut[topic / 64] |= bit;
	return 1;
}

#endif
