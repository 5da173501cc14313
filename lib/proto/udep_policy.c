/* SPDX-License-Identifier: MIT */
/*
 * udep_policy.c - datagram size and rejoin schedule of a UD endpoint
 * (udep_policy.h). Pure: no verbs, no clock.
 */
#include <errno.h>

#include "msgaccel.h"
#include "udep_policy.h"

uint64_t msga__rejoin_delay_ns(uint32_t attempt)
{
	if (attempt >= MSGA__REJOIN_ATTEMPTS)
		return UINT64_MAX;
	/* 100 ms << 7 is past the cap already: no shift can overflow */
	if (attempt >= 7 || MSGA__REJOIN_BASE_NS << attempt >
			    MSGA__REJOIN_CAP_NS)
		return MSGA__REJOIN_CAP_NS;
	return MSGA__REJOIN_BASE_NS << attempt;
}

uint32_t msga__dgram_size(uint32_t port_mtu, uint32_t group_mtu,
			  uint32_t configured)
{
	uint32_t size = port_mtu;

	if (group_mtu && group_mtu < size)
		size = group_mtu;
	if (configured && configured < size)
		size = configured;
	return size;
}

int msga__dgram_check(uint32_t configured)
{
	return configured && configured < MSGA_DATAGRAM_MIN ? -EINVAL : 0;
}
