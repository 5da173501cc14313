/* SPDX-License-Identifier: MIT */
/*
 * hold.h - which messages of one receive buffer the application holds
 * (msga_msg_hold(3)), kept in the subscriber's private memory and told
 * apart by each delivery's stamp, never by the buffer's bytes.
 *
 * Why stamps: a copy of a struct msga_msg outlives the message. Once its
 * buffer is re-posted and filled again, the copy's data pointer names the
 * new message, and whatever sits in the buffer is the peer's. The one
 * field of the copy that names the delivery is rx_time_ns: the library
 * makes the stamps of holdable deliveries strictly increasing within a
 * context (msga__rx_clock_unique), so (buffer, stamp) is one delivery.
 *
 * How: a buffer carries up to MSGA__HOLD_RECS_MAX messages of one fill
 * (a BATCH), delivered back to back with consecutive stamps. While any of
 * them is held the buffer is not re-posted, so no new fill can begin; the
 * first hold of a fill sets since, and each held message is the bit
 * stamp - since. A copy of an earlier fill has a stamp below since; a
 * copy of a message of this fill that was not held, or already released,
 * finds its bit clear. Exact, with no wrap: stamps are 64-bit ns.
 *
 * Pure: test_hold.c and fuzz_hold.c drive it with made-up stamps.
 */
#ifndef MSGA_HOLD_H
#define MSGA_HOLD_H

#include <stdint.h>

/* Messages one buffer of MSGA__DATA_SLOT (4096) bytes can carry: a
 * BATCH's records are at least a 24-byte header each. */
#define MSGA__HOLD_RECS_MAX 192u

struct msga__holds {
	uint64_t since;         /* stamp of this fill's first hold */
	uint64_t map[MSGA__HOLD_RECS_MAX / 64]; /* held: bit stamp - since */
	uint32_t n;             /* bits set: while nonzero, no re-post */
};

/* Whether the delivery stamped stamp is held. */
int msga__holds_has(const struct msga__holds *h, uint64_t stamp);

/*
 * Hold the delivery stamped stamp, which the caller checked is the one
 * being delivered from this buffer: 0, -EALREADY (held), or -EINVAL (a
 * fill of more than MSGA__HOLD_RECS_MAX deliveries, which the wire
 * cannot carry).
 */
int msga__holds_take(struct msga__holds *h, uint64_t stamp);

/* Release the delivery stamped stamp: 1 if it was held, else 0 (no-op). */
int msga__holds_give(struct msga__holds *h, uint64_t stamp);

#endif
