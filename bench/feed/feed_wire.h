/* SPDX-License-Identifier: MIT */
/*
 * feed_wire - the head of every msga_feed message, in one of two layouts
 * chosen by the message's length, and the one decoder every received
 * message goes through (producer and consumer alike), so that no reader
 * takes more bytes than the message has.
 *
 * full     (len >= FEED_WIRE_FULL_LEN, 32 B): seq u64, due_ns u64,
 *          sent_ns u64, flags u32, a reserved u32 (0), then filler. Rate
 *          steps need it: many messages are in flight and each echo is
 *          timed from the stamps it carries back.
 * compact  (FEED_WIRE_COMPACT_LEN <= len < 32, 12 B): seq u64, flags u32,
 *          then filler. Ping-pong only: one message is in flight, so the
 *          pinger keeps the send time itself, and issue 38's table can
 *          measure 12 and 32 B messages.
 * Shorter than 12 B: not a feed message; the decoder refuses it unread.
 *
 * Host byte order and no padding rules beyond these offsets: both ends
 * are processes of one msga_feed run on one host.
 */
#ifndef MSGA_BENCH_FEED_WIRE_H
#define MSGA_BENCH_FEED_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define FEED_WIRE_FULL_LEN 32
#define FEED_WIRE_COMPACT_LEN 12

#define FEED_FLAG_STOP 1u  /* the last message: the consumer echoes, ends */
#define FEED_FLAG_PROBE 2u /* multicast: is the consumer there yet? */

/* One message's header, as the sender meant it and the receiver read it. */
struct feed_msg {
	uint64_t seq;
	uint32_t flags;
	int stamped;       /* due_ns and sent_ns are on the wire (full) */
	uint64_t due_ns;   /* the message's slot in the supply schedule */
	uint64_t sent_ns;  /* when the sender handed it to the library */
};

/*
 * Write m's header at the head of buf, a message of len bytes: the full
 * layout when len >= FEED_WIRE_FULL_LEN, else the compact one (m's stamps
 * are then not sent). Bytes past the header are left as they are.
 * Returns 0, or -EMSGSIZE when len < FEED_WIRE_COMPACT_LEN (buf is not
 * written).
 */
int feed_wire_encode(void *buf, size_t len, const struct feed_msg *m);

/*
 * Read the header of a received message of len bytes at data, in the
 * layout its length says; out->stamped tells which. Returns 0, or
 * -EBADMSG when len < FEED_WIRE_COMPACT_LEN (nothing is read, *out is
 * zeroed).
 */
int feed_wire_decode(const void *data, size_t len, struct feed_msg *out);

#endif
