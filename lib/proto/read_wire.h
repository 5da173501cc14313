/* SPDX-License-Identifier: MIT */
/*
 * read_wire.h - what a reliable multicast publisher's READ endpoint
 * (mcast_serve.c) tells a subscriber that connects to it (mcast_read.c),
 * in rdma_cm's accept private data. Little-endian, 32 bytes:
 *
 *   0  u32 magic    "MSGR"
 *   4  u16 version  1
 *   6  u16 zero
 *   8  u32 rkey     of the retention block, registered zero-based: an
 *                   address on the wire is an offset into the block, no
 *                   virtual address of the publisher's is ever sent
 *  12  u32 zero
 *  16  u64 len      the block's bytes: the control block, then the ring
 *  24  u64 cap      the ring's bytes (retain.h)
 *
 * The subscriber reads nothing else from the publisher's memory than
 * that block, and checks what it reads (retain_scan.h).
 */
#ifndef MSGA_READ_WIRE_H
#define MSGA_READ_WIRE_H

#include <stdint.h>

#define MSGA__RDW_MAGIC 0x5247534du /* "MSGR" little-endian */
#define MSGA__RDW_VERSION 1u
#define MSGA__RDW_LEN 32u

struct msga__rdw_offer {
	uint32_t rkey;
	uint64_t len, cap;
};

void msga__rdw_put(void *buf, const struct msga__rdw_offer *o);
/* 0, or -EPROTO when n bytes at buf are not a valid offer. */
int msga__rdw_get(const void *buf, uint32_t n, struct msga__rdw_offer *o);

#endif
