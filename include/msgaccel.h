/* SPDX-License-Identifier: MIT */
/*
 * msgaccel.h - the one public header of libmsgaccel.
 *
 * Conventions (see msgaccel(7)):
 *  - every fallible call returns int: >= 0 on success, a negative errno on
 *    failure; msga_strerror() turns it into text;
 *  - handles are opaque; the only public structs are attribute/info structs
 *    whose first field is their size, so they can grow without breaking ABI;
 *  - a context and everything created from it belong to one thread at a
 *    time; the library takes no locks on the fast path.
 */
#ifndef MSGACCEL_H
#define MSGACCEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MSGA_API __attribute__((visibility("default")))
#else
#define MSGA_API
#endif

#define MSGA_VERSION_MAJOR 0
#define MSGA_VERSION_MINOR 1
#define MSGA_VERSION_PATCH 0

/** Library version as "MAJOR.MINOR.PATCH". */
MSGA_API const char *msga_version(void);

/**
 * Text for a negative (or positive) errno returned by any msga_ call.
 * Never returns NULL; unknown codes give "Unknown error N".
 */
MSGA_API const char *msga_strerror(int err);

/* ------------------------------------------------------------------ */
/* Context: one opened RDMA device port and its protection domain.     */
/* ------------------------------------------------------------------ */

struct msga_ctx;

/** Transport of the device under a context. */
enum msga_transport {
	MSGA_TRANSPORT_UNKNOWN = 0,
	MSGA_TRANSPORT_IB = 1,    /* InfiniBand: LIDs, subnet manager */
	MSGA_TRANSPORT_ROCE = 2,  /* RoCE (v1 or v2): Ethernet link, GIDs */
	MSGA_TRANSPORT_IWARP = 3, /* iWARP: RC only, rdma_cm connections */
};

/** How msga_ctx_open() picked its device. */
enum msga_ctx_flags {
	/* Busy-poll only: do not create a completion channel / event fd. */
	MSGA_CTX_NO_EVENTS = 1u << 0,
};

/**
 * Attributes for msga_ctx_open(). Zero-fill, then set .size.
 * Device choice, in order: dev_name if set; else local_addr (resolved to a
 * device through rdma_cm); else the first device with an active port.
 */
struct msga_ctx_attr {
	uint32_t size;          /* sizeof(struct msga_ctx_attr) */
	uint32_t flags;         /* enum msga_ctx_flags */
	const char *dev_name;   /* e.g. "mlx5_0", "rxe0"; NULL = any */
	const char *local_addr; /* numeric IPv4/IPv6 address; NULL = any */
	uint8_t port;           /* 1-based port; 0 = first active port */
	uint8_t reserved[7];
};

/** What msga_ctx_query() reports about the opened device port. */
struct msga_dev_info {
	uint32_t size;          /* sizeof(struct msga_dev_info), set by caller */
	enum msga_transport transport;
	char dev_name[64];
	uint8_t port;
	uint8_t reserved[3];
	uint32_t active_mtu;    /* bytes, the port's active path MTU */
	uint32_t max_inline;    /* largest inline send an RC QP accepted */
	uint32_t max_sge;       /* scatter/gather entries per send WR */
	uint32_t max_qp_wr;     /* work requests per queue */
	uint32_t max_cqe;       /* completion queue entries */
	uint64_t max_mr_size;   /* largest registrable region, bytes */
	uint64_t node_guid;     /* host byte order */
};

/**
 * Open a context on an RDMA device port. On success *ctxp is set and 0 is
 * returned; on failure *ctxp is NULL and a negative errno is returned.
 */
MSGA_API int msga_ctx_open(const struct msga_ctx_attr *attr,
			   struct msga_ctx **ctxp);

/** Close a context, freeing everything made from it. NULL is a no-op. */
MSGA_API void msga_ctx_close(struct msga_ctx *ctx);

/** Fill *info (caller sets info->size first). */
MSGA_API int msga_ctx_query(const struct msga_ctx *ctx,
			    struct msga_dev_info *info);

/**
 * The last failure recorded on ctx ("what failed and where"), or "" when
 * none. The string stays valid until the next call on ctx.
 */
MSGA_API const char *msga_ctx_last_error(const struct msga_ctx *ctx);

/**
 * Why the last msga_ctx_open() in this thread failed, or "" if it did not.
 * (A failed open has no context to hold the message.)
 */
MSGA_API const char *msga_open_error(void);

/** Printable name of a transport: "InfiniBand", "RoCE", "iWARP". */
MSGA_API const char *msga_transport_name(enum msga_transport t);

#ifdef __cplusplus
}
#endif

#endif /* MSGACCEL_H */
