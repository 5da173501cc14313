/* SPDX-License-Identifier: MIT */
/*
 * key_gen.c - a context's keys over time (msga_ctx_reload_keys(3)): the
 * current ring, whose first key is the context's own and whose keys peers
 * may prove; and, for a while after a reload, the ring it replaced, whose
 * keys peers may still prove (the overlap), so that a rotation need not
 * be done on every host at the same instant. Established connections
 * keep the key they proved (msga__key_hold), whatever the file says now:
 * a reload changes who may connect next, not who is connected.
 */
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "internal.h"

int msga__ctx_keys_open(struct msga_ctx *ctx, const struct msga_ctx_attr *attr)
{
	int ret = msga__keyring_load(attr, &ctx->keys);

	if (ret || !ctx->keys)
		return ret;
	ctx->qkey = msga__auth_qkey(ctx->keys->keys[0].key);
	if (attr->key_file) {
		ctx->key_file = strdup(attr->key_file);
		if (!ctx->key_file)
			return msga__open_fail(-ENOMEM, "msga_ctx_open: "
					       "key_file");
	}
	return 0;
}

void msga__ctx_keys_close(struct msga_ctx *ctx)
{
	msga__keyring_put(ctx->keys);
	msga__keyring_put(ctx->prev_keys);
	ctx->keys = ctx->prev_keys = NULL;
	free(ctx->key_file);
	ctx->key_file = NULL;
}

/* The replaced ring is forgotten when its overlap is over. */
static void prev_expire(struct msga_ctx *ctx, uint64_t now)
{
	if (ctx->prev_keys && now >= ctx->prev_until_ns) {
		msga__keyring_put(ctx->prev_keys);
		ctx->prev_keys = NULL;
	}
}

const struct msga__key *msga__ctx_key_find(struct msga_ctx *ctx, uint64_t id)
{
	const struct msga__key *k = msga__keyring_find(ctx->keys, id);

	if (k || !ctx->prev_keys)
		return k;
	prev_expire(ctx, msga__now_ns());
	return msga__keyring_find(ctx->prev_keys, id);
}

MSGA_API int msga_ctx_reload_keys(struct msga_ctx *ctx, uint32_t overlap_ms)
{
	const struct msga__kr_sink sink = { ctx, "msga_ctx_reload_keys" };
	struct msga__keyring *kr;
	int ret;

	if (!ctx)
		return -EINVAL;
	if (!ctx->key_file)
		return msga__ctx_fail(ctx, -EINVAL, "msga_ctx_reload_keys: "
				      "the context was not opened with a "
				      "key_file");
	if (overlap_ms > MSGA_KEY_OVERLAP_MAX_MS)
		return msga__ctx_fail(ctx, -EINVAL, "msga_ctx_reload_keys: "
				      "overlap_ms %u > %u", overlap_ms,
				      MSGA_KEY_OVERLAP_MAX_MS);
	ret = msga__keyring_load_file(ctx->key_file, &sink, &kr);
	if (ret)
		return ret; /* (the keys in use stay) */
	/* One replaced ring at a time: an earlier overlap ends here. */
	msga__keyring_put(ctx->prev_keys);
	ctx->prev_keys = NULL;
	if (overlap_ms) {
		ctx->prev_keys = ctx->keys;
		ctx->prev_until_ns = msga__now_ns() +
				     (uint64_t)overlap_ms * 1000000u;
	} else {
		msga__keyring_put(ctx->keys);
	}
	ctx->keys = kr;
	/* UD endpoints made from now on take the new own key's Q_Key. */
	ctx->qkey = msga__auth_qkey(kr->keys[0].key);
	return 0;
}
