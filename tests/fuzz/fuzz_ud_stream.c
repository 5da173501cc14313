/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ud_stream.c - a subscriber's stream table (lib/ud_stream.c). Every
 * datagram that decodes names a stream (origin, topic) the table looks up
 * or adds, so a peer chooses the keys: origins from a few or any, topic
 * names as a decoded header allows (1..MSGA_TOPIC_MAX bytes, no NUL) plus
 * over-long ones. Checked against a model (a list in arrival order): the
 * same key finds the same stream, a new key gets the next position while
 * there is room, a full table refuses new keys (today's rule; issue 23
 * item 15 adds eviction, and full_table() is where the harness says what
 * a full table may do), and the stats copy says what was stored.
 */
#include <errno.h>
#include <string.h>

#include "msgaccel.h"
#include "ud_stream.h"
#include "fuzz.h"

#define MAX_STREAMS 16

struct key {
	uint64_t origin;
	uint32_t len;
	char topic[MSGA_TOPIC_MAX + 2];
};

struct model {
	struct key keys[MAX_STREAMS];
	uint32_t n, max;
};

static int model_find(const struct model *m, const struct key *k)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (m->keys[i].origin == k->origin &&
		    m->keys[i].len == k->len &&
		    !memcmp(m->keys[i].topic, k->topic, k->len))
			return (int)i;
	return -1;
}

static void next_key(struct fuzz_in *in, struct key *k)
{
	uint8_t how = fuzz_u8(in);

	memset(k, 0, sizeof(*k));
	k->origin = how & 1 ? fuzz_u64(in) : fuzz_u8(in) % 4;
	k->len = how & 2 ? fuzz_range(in, 1, MSGA_TOPIC_MAX + 2) :
			   fuzz_range(in, 1, 3);
	for (uint32_t i = 0; i < k->len; i++) {
		uint8_t c = how & 4 ? fuzz_u8(in) : 'a' + fuzz_u8(in) % 3;

		k->topic[i] = (char)(c ? c : 'z'); /* a decoded name has no NUL */
	}
}

/* A new key and no room: refused (no eviction yet, issue 23 item 15). */
static void full_table(struct msga__ustreams *t, struct msga__ustream *s)
{
	FUZZ_CHECK(s == NULL);
	FUZZ_CHECK(t->n == t->max);
}

static void check_stream(const struct msga__ustreams *t,
			 const struct msga__ustream *s, const struct key *k,
			 uint32_t pos, uint32_t conn_id)
{
	struct msga_stream_stats st;

	FUZZ_CHECK(msga__ustreams_pos(t, s) == pos);
	FUZZ_CHECK(s->origin == k->origin);
	FUZZ_CHECK(strlen(s->topic) == k->len &&
		   !memcmp(s->topic, k->topic, k->len));
	msga__ustream_stats(s, &st);
	FUZZ_CHECK(st.origin == k->origin && st.conn_id == conn_id);
	FUZZ_CHECK(!strcmp(st.topic, s->topic));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct msga__ustreams t;
	static struct model m;
	static uint32_t conn_of[MAX_STREAMS];

	memset(&m, 0, sizeof(m));
	FUZZ_CHECK(msga__ustreams_init(&t, 0) == -EINVAL);
	m.max = (uint32_t)fuzz_range(&in, 1, MAX_STREAMS);
	FUZZ_CHECK(msga__ustreams_init(&t, m.max) == 0);
	while (fuzz_left(&in)) {
		struct key k;
		uint32_t conn_id = fuzz_u8(&in);
		struct msga__ustream *s;
		char *topic;
		int found;

		next_key(&in, &k);
		/* Exactly the name's bytes: it is not NUL-terminated. */
		topic = fuzz_dup(k.topic, k.len);
		s = msga__ustreams_get(&t, k.origin, topic, k.len, conn_id);
		free(topic);
		found = model_find(&m, &k);
		if (k.len > MSGA_TOPIC_MAX) {
			FUZZ_CHECK(s == NULL);
		} else if (found >= 0) {
			FUZZ_CHECK(s);
			check_stream(&t, s, &k, (uint32_t)found,
				     conn_of[found]);
		} else if (m.n == m.max) {
			full_table(&t, s);
		} else {
			FUZZ_CHECK(s);
			conn_of[m.n] = conn_id;
			m.keys[m.n++] = k;
			check_stream(&t, s, &k, m.n - 1, conn_id);
			FUZZ_CHECK(s->seq.next == 0 && s->bytes == 0);
		}
		FUZZ_CHECK(t.n == m.n);
	}
	msga__ustreams_fini(&t);
	return 0;
}
