/* SPDX-License-Identifier: MIT */
/* retry.c - a subscriber's connections waiting to reconnect: retry.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "retry.h"
#include "backoff.h"

void msga__retries_init(struct msga__retries *q)
{
	msga__list_init(&q->list);
	q->rand = 0;
}

struct msga__retry *msga__retry_new(const char *peer,
				    const struct sockaddr_storage *ss)
{
	struct msga__retry *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	snprintf(r->peer, sizeof(r->peer), "%s", peer);
	r->ss = *ss;
	return r;
}

void msga__retry_wait(struct msga__retries *q, struct msga__retry *r,
		      int restart, uint64_t now)
{
	if (!q->rand) /* subscribers of one publisher draw apart */
		q->rand = now ^ (uintptr_t)q ^ 0x9e3779b97f4a7c15ull;
	r->backoff = msga__backoff_next(r->backoff, restart);
	r->due = msga__backoff_due(now, r->backoff, &q->rand);
	msga__list_add_tail(&q->list, &r->node);
}

struct msga__retry *msga__retry_due(struct msga__retries *q, uint64_t now,
				    uint64_t *next)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &q->list) {
		struct msga__retry *r =
			msga__container_of(pos, struct msga__retry, node);

		if (msga__time_reached(now, r->due)) {
			msga__list_del(&r->node);
			return r;
		}
		if (r->due < *next)
			*next = r->due;
	}
	return NULL;
}

int msga__retry_cancel(struct msga__retries *q, uint32_t conn_id)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &q->list) {
		struct msga__retry *r =
			msga__container_of(pos, struct msga__retry, node);

		if (r->id != conn_id)
			continue;
		msga__list_del(&r->node);
		free(r);
		return 0;
	}
	return -ENOENT;
}

void msga__retry_free_all(struct msga__retries *q)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &q->list) {
		msga__list_del(pos);
		free(msga__container_of(pos, struct msga__retry, node));
	}
}
