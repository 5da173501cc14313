/* SPDX-License-Identifier: MIT */
/*
 * error.c - error text: msga_strerror() for codes, and the "what failed and
 * where" messages kept per context (or per thread for a failed open).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/*
 * strerror() is not thread-safe and strerror_r() has two ABIs; a per-thread
 * buffer with the GNU variant keeps msga_strerror() reentrant.
 */
static __thread char strerror_buf[128];
static __thread char open_errbuf[MSGA_ERRBUF_LEN];

MSGA_API const char *msga_strerror(int err)
{
	if (err == INT_MIN)
		err = INT_MAX; /* -INT_MIN overflows; either is "Unknown error" */
	if (err < 0)
		err = -err;
	if (err == 0)
		return "Success";
	return strerror_r(err, strerror_buf, sizeof(strerror_buf));
}

static void format_error(char *buf, size_t len, int err, const char *fmt,
			 va_list ap)
{
	int n = vsnprintf(buf, len, fmt, ap);

	if (n >= 0 && (size_t)n < len && err)
		snprintf(buf + n, len - n, ": %s", msga_strerror(err));
}

int msga__ctx_fail(struct msga_ctx *ctx, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	format_error(ctx->errbuf, sizeof(ctx->errbuf), err, fmt, ap);
	va_end(ap);
	return err;
}

int msga__open_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	format_error(open_errbuf, sizeof(open_errbuf), err, fmt, ap);
	va_end(ap);
	return err;
}

void msga__open_error_clear(void)
{
	open_errbuf[0] = '\0';
}

MSGA_API const char *msga_open_error(void)
{
	return open_errbuf;
}

MSGA_API const char *msga_ctx_last_error(const struct msga_ctx *ctx)
{
	return ctx ? ctx->errbuf : "";
}

MSGA_API void msga_ctx_clear_error(struct msga_ctx *ctx)
{
	if (ctx)
		ctx->errbuf[0] = '\0';
}
