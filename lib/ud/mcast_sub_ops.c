/* SPDX-License-Identifier: MIT */
/*
 * mcast_sub_ops.c - the datagram subscriber's table (struct
 * msga__sub_ops, pubsub.h): mcast:// memberships (mcast_sub.c) and
 * ud:// ones (ud_unicast.c) share one list, its timers and its holds.
 */
#include <string.h>

#include "mcast.h"
#include "pubsub.h"

/* What the lower files call their owners through (mcast.h). */
static const struct msga__sub_up ud_sub_up = {
	.init = msga__msub_init,
	.mship = msga__msub_mship,
	.hand = msga__msub_hand,
	.stream_event = msga__msub_stream_event,
	.stop = msga__msub_stop,
	.repaired = msga__mrep_repaired,
	.nak = msga__mrep_nak,
};

static int ud_sub_connect(struct msga_sub *sub, const char *uri,
			  uint32_t *id)
{
	sub->ud.up = &ud_sub_up; /* before any membership exists */
	if (!strncmp(uri, "mcast://", 8))
		return msga__msub_connect(sub, uri, id);
	return msga__usub_connect(sub, uri, &msga__usub_cb, id);
}

/* Its timers, and the ud:// memberships due to try again (0.10). */
static uint64_t ud_sub_tick(struct msga_sub *sub, uint64_t now)
{
	uint64_t next = msga__msub_tick(sub, now), retry;

	if (sub->dead)
		return next;
	retry = msga__usub_retry_tick(sub, &msga__usub_cb, now);
	return retry < next ? retry : next;
}

const struct msga__sub_ops msga__ud_sub_ops = {
	.connect = ud_sub_connect,
	.disconnect = msga__msub_disconnect,
	.tick = ud_sub_tick,
	.bury = msga__msub_kill_all,
	.free = msga__msub_fini,
	.hold = msga__msub_hold,
	.release = msga__msub_release,
	.line = msga__msub_line,
};
