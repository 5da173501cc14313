/* SPDX-License-Identifier: MIT */
/*
 * last_value.c - the per-topic last-value store of last_value.h. An entry
 * grows to its topic's largest message so far and is reused after that,
 * so a steady feed allocates nothing per message: one memcpy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "last_value.h"

void msga__lv_init(struct msga__lv_store *s)
{
	memset(s, 0, sizeof(*s));
}

int msga__lv_put(struct msga__lv_store *s, uint32_t topic, uint64_t seq,
		 const void *data, size_t len)
{
	struct msga__lv_ent *e;

	if (topic >= MSGA_PUB_TOPICS_MAX || !seq || (!data && len))
		return -EINVAL;
	e = s->ent[topic];
	if (len > MSGA__LV_MAX) {
		if (e)
			e->seq = 0;
		return 0;
	}
	if (!e || e->cap < len) {
		struct msga__lv_ent *n = realloc(e, sizeof(*e) + len);

		if (!n) {
			if (e)
				e->seq = 0;
			return -ENOMEM;
		}
		e = s->ent[topic] = n;
		e->cap = (uint32_t)len;
	}
	if (len)
		memcpy(e->data, data, len);
	e->len = (uint32_t)len;
	e->seq = seq;
	return 0;
}

const struct msga__lv_ent *msga__lv_get(const struct msga__lv_store *s,
					uint32_t topic)
{
	if (topic >= MSGA_PUB_TOPICS_MAX || !s->ent[topic] ||
	    !s->ent[topic]->seq)
		return NULL;
	return s->ent[topic];
}

void msga__lv_free(struct msga__lv_store *s)
{
	for (uint32_t i = 0; i < MSGA_PUB_TOPICS_MAX; i++)
		free(s->ent[i]);
	msga__lv_init(s);
}
