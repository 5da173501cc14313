/* SPDX-License-Identifier: MIT */
/*
 * tres_table.h - what a subscriber by name has heard on the resolver
 * group (issue 37): the publishers (by origin: one publisher object, one
 * transport, one address; a restarted publisher is a new origin) whose
 * adverts name topics that its patterns match, and which of those topics
 * each one carries. The caller matches the patterns and connects; this
 * table says when: a publisher is new (connect), has a new topic, is
 * refreshed, or has lost its last topic (by withdrawal or silence:
 * disconnect).
 *
 * Everything is bounded when the table is made: publishers (so a flood of
 * forged adverts cannot open more connections than that) and topics.
 * An advert that does not fit is dropped and counted, never evicts a
 * publisher already heard. An advert that contradicts what an origin
 * said before (another transport or flags; for rdma:// and ud:// another
 * address or port) is dropped and counted: an origin's endpoint never
 * moves. A multicast publisher's topics may each have a group of their
 * own (a range): each topic keeps its group. A multicast publisher with
 * two lines (A/B) advertises each topic on each line, line B's record
 * flagged MSGA__TRW_F_LINE_B: the table keeps (origin, topic, line) as
 * one entry each, the line B one with line B's group, and the publisher's
 * flags without that bit.
 *
 * Pure logic: tested on the host (tests/test_tres_table.c).
 */
#ifndef MSGA_TRES_TABLE_H
#define MSGA_TRES_TABLE_H

#include <stdint.h>

#include "tres_wire.h"

/* A publisher heard: where to reach it, and how many topics it carries
 * that the subscriber wants, each line's counted (0: the slot is free);
 * flags never has MSGA__TRW_F_LINE_B. */
struct msga__tres_pub {
	uint64_t origin;
	uint8_t kind, flags;
	uint16_t port;
	uint8_t addr[16];
	uint32_t topics;
};

/* One (origin, topic) heard, in a hash chain; a free one's topic is "". */
struct msga__tres_ent {
	uint64_t origin, heard_ns;
	uint64_t ttl_ns;               /* forgotten after this silence */
	uint8_t addr[16];              /* its group (mcast://; else the
					* publisher's address) */
	uint32_t pub, next;
	uint8_t line;                  /* 1: line B's (MSGA__TRW_F_LINE_B) */
	char topic[MSGA_TOPIC_MAX + 1];
};

struct msga__tres_table {
	struct msga__tres_pub *pub;
	struct msga__tres_ent *ent;
	uint32_t *bucket;              /* chains of ent, by (origin, topic) */
	uint32_t pub_max, ent_max, nbucket;
	uint32_t free_ent, nent;       /* free list through ent[].next */
	uint64_t full, conflicts;      /* adverts dropped, by why */
};

#define MSGA__TRES_PUBS_MAX 4096u
#define MSGA__TRES_ENTS_MAX (1u << 20)

/* What an advert did to the table. */
enum {
	MSGA__TRES_KNOWN,     /* heard before: refreshed */
	MSGA__TRES_NEW_TOPIC, /* a new topic of a publisher already heard */
	MSGA__TRES_NEW_PUB,   /* a new publisher (and its first topic) */
	MSGA__TRES_FULL,      /* no room: dropped (counted in full) */
	MSGA__TRES_CONFLICT,  /* contradicts its origin: dropped (conflicts) */
};

/* 0, -EINVAL (a bound 0 or above its maximum) or -ENOMEM. */
int msga__tres_table_init(struct msga__tres_table *t, uint32_t pub_max,
			  uint32_t ent_max);
void msga__tres_table_fini(struct msga__tres_table *t);

/* An advert (checked by tres_wire.c) heard at now, to be forgotten
 * after ttl_ns without another: MSGA__TRES_*, and the publisher's slot in
 * *pub (unless FULL or CONFLICT). */
int msga__tres_heard(struct msga__tres_table *t,
		     const struct msga__trw_advert *a, uint64_t now,
		     uint64_t ttl_ns, uint32_t *pub);
/*
 * A withdrawal: 0 if the table did not have the topic (or the record
 * names another endpoint than its origin's: counted), 1 if it is gone,
 * 2 if it was its publisher's last (the slot in *pub: disconnect it; its
 * fields stay readable until the next call that adds).
 */
int msga__tres_withdrawn(struct msga__tres_table *t,
			 const struct msga__trw_advert *a, uint32_t *pub);
/*
 * Forget each topic not heard for its ttl_ns by now; gone(user, slot) for
 * each publisher that loses its last topic so. The topics forgotten.
 * It walks every chain: call it about once a second, not per advert.
 */
uint32_t msga__tres_expire(struct msga__tres_table *t, uint64_t now,
			   void (*gone)(void *user, uint32_t pub),
			   void *user);

#endif
