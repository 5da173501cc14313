/* SPDX-License-Identifier: MIT */
/*
 * ud_obj.h - the mcast:// and ud:// transports' parts of struct msga_pub
 * and struct msga_sub, which pubsub.h embeds as pub->ud and sub->ud (as
 * it embeds rc_pub.h's as pub->rc). lib/api fills in what msga_pub_attr
 * and msga_sub_attr set; lib/ud does the rest.
 */
#ifndef MSGA_UD_OBJ_H
#define MSGA_UD_OBJ_H

#include <stdint.h>

#include "msgaccel.h"
#include "list.h"
#include "mcast_map.h"
#include "reasm.h"
#include "repair.h"
#include "retain.h"
#include "retry.h"
#include "ud_stream.h"

struct msga__udep;
struct msga__udest;
struct msga__rserve;
struct msga__nakdst;
struct msga__rstream;
struct msga__rconn;
struct msga__pub_up;
struct msga__sub_up;

/* A multicast publisher (mcast_pub.c) or a unicast UD one (ud_unicast.c). */
struct msga__pub_ud {
	struct msga__udep *ep;          /* its endpoint (udep.c) */
	const struct msga__pub_up *up;  /* for the lower files (mcast.h) */
	struct msga__mcast_range mc_range;
	struct msga__mcast_range mc_range_b; /* msga_pub_attr.uri_b */
	int line_b;                     /* every datagram goes on both */
	/*
	 * Fault injection for tests only (no API sets it): drop every
	 * fault_drop_every-th data datagram of line fault_drop_line (0: A,
	 * 1: B) before it is sent, so a test can make one line lossy and
	 * the other whole. Or, with fault_drop_ppm set, drop each data
	 * datagram, of any line or ud:// destination, with that chance in
	 * a million, drawn from the xorshift32 state fault_rng (the test
	 * seeds it; nonzero), and count the drops in fault_dropped. Resends
	 * (mcast_retx.c) do not pass through the hook: repairs are never
	 * dropped.
	 */
	uint32_t fault_drop_every, fault_drop_line, fault_count;
	uint32_t fault_drop_ppm, fault_rng;
	uint64_t fault_dropped;
	uint64_t origin;
	uint32_t frag;                  /* fragment payload */
	uint32_t max_datagram;          /* msga_pub_attr's; 0: the MTU's */
	int pumping;                    /* a fragmented message is going out */
	const char *pump_data;
	uint32_t pump_off, pump_lkey;
	int32_t pump_tag;               /* tx slot, or MSGA__TAG_BIG */
	uint32_t big_inflight;          /* big_buf datagrams not completed */
	/* unicast UD publishers (ud_unicast.c): subscribers by slot */
	int unicast;
	struct msga__udest *dests;
	uint32_t next_dest_id;
	int ndests;
	uint64_t dests_used;            /* bit i: dests[i].used (a message
					 * walks these, not every slot) */
	uint64_t pump_mask;             /* dest slots the message goes to */
	/* heartbeats (msga_pub_attr.heartbeat_ms) */
	uint64_t hb_ns;                 /* the first after this much idling */
	uint16_t hb_cap_ms;             /* the longest interval, announced */
	uint64_t hb_look_ns;            /* next look at the topics */
	int hb_active;                  /* a commit since the last look */
	/* MSGA_PUB_RELIABLE (mcast_retx.c) */
	int reliable;
	struct msga__retain retain;
	struct msga__rserve *serve;     /* READs of retain (mcast_serve.c) */
	uint32_t rpos_flag;             /* MSGA__UDW_RPOS while served */
	uint64_t big_rpos;              /* the message's record position */
	uint64_t retx_window_ns;        /* the NAK budget's window start */
	uint32_t retx_sent;             /* datagrams for NAKs in it */
	uint64_t naks_taken, retx_msgs, lost_sent;
	uint64_t forged;                /* dropped: MAC (dgram_auth.c) */
	/* msga_pub_flush of a reliable one: repair work seen, and since;
	 * when it next announces each stream's tail (mcast_pub.c), and the
	 * topic the last announcement that found no room stopped at */
	uint64_t flush_work, flush_quiet_ns, flush_announce_ns;
	uint32_t flush_announce_from;
};

/* A subscriber's multicast memberships and unicast UD streams (mcast_sub.c). */
struct msga__sub_ud {
	struct msga__list mships;
	const struct msga__sub_up *up;  /* for the lower files (mcast.h) */
	struct msga__ustreams streams;
	struct msga__reasm reasm;
	struct msga__reasm preasm;     /* streams on probation (mcast_sub.c) */
	struct msga_sub_stats st;
	uint64_t silence_look_ns;      /* next look for silent streams */
	/* recovery from reliable publishers (mcast_repair.c) */
	uint64_t recovery_ns;          /* msga_sub_attr.recovery_ms */
	uint32_t recovery_bytes;
	uint32_t history;              /* msga_sub_attr.history */
	uint64_t history_from;         /* msga_sub_attr.history_from */
	uint32_t rx_depth;             /* msga_sub_attr.rx_depth, or 512 */
	int repair_on;                 /* repair is set up */
	struct msga__repair repair;
	struct msga__nakdst *nakdst;   /* where NAKs go, by publisher */
	/* one round's NAKs, to be shared (mcast_repair.c) */
	struct msga__nak_due *nak_due;  /* MSGA__UD_NAK_ROUND_MAX */
	uint32_t nak_ndue;
	uint32_t nak_turn;              /* rotates who goes first */
	/* NAK pacing: a window of numbers per NAK retry period, tokens */
	uint64_t nak_window, nak_tokens, nak_refill_ns;
	uint64_t nak_period_ns, nak_asked, nak_recovered0;
	struct msga__rstream *rstreams; /* ring positions, by stream */
	struct msga__rconn **rconns;   /* READ repair: MSGA__UD_RCONN_MAX */
	/* ud:// memberships waiting to try again (0.10, ud_unicast.c) */
	struct msga__retries retries;
};

#endif
