/* SPDX-License-Identifier: MIT */
/*
 * udep_policy.h - two pure decisions of a UD endpoint, kept apart so they
 * are unit-tested: how large a datagram a publisher sends, and when a
 * group the fabric dropped is joined again.
 */
#ifndef MSGA_UDEP_POLICY_H
#define MSGA_UDEP_POLICY_H

#include <stdint.h>

/*
 * Rejoin after a joined group is lost (RDMA_CM_EVENT_MULTICAST_ERROR: an
 * SM restart, a client reregister, a port that went away): attempt n
 * (0-based) waits MSGA__REJOIN_BASE_NS << n, at most MSGA__REJOIN_CAP_NS,
 * and after MSGA__REJOIN_ATTEMPTS failed attempts the group is given up
 * (about a minute in all).
 */
#define MSGA__REJOIN_BASE_NS 100000000ull      /* 100 ms */
#define MSGA__REJOIN_CAP_NS 10000000000ull     /* 10 s */
#define MSGA__REJOIN_ATTEMPTS 12u

/*
 * Old group address handles kept for sends queued before a rejoin
 * (udep.c, park_ah): one per rejoin, freed as those sends complete.
 */
#define MSGA__PARKED_AH_MAX 64u

/* The wait before rejoin attempt n, or UINT64_MAX: give up. */
uint64_t msga__rejoin_delay_ns(uint32_t attempt);

/*
 * The largest datagram to send, headers included: the smaller of the
 * port's MTU and the group's (0: not known) and, when configured is not 0,
 * of configured. Callers validated configured (msga__dgram_check).
 */
uint32_t msga__dgram_size(uint32_t port_mtu, uint32_t group_mtu,
			  uint32_t configured);
/* msga_pub_attr.max_datagram: 0 or at least MSGA_DATAGRAM_MIN; -EINVAL. */
int msga__dgram_check(uint32_t configured);

#endif
