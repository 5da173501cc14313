/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ud_stream.c - a subscriber's stream table (lib/ud_stream.c). Every
 * datagram that decodes names a stream (origin, topic) the table looks up
 * or adds, so a peer chooses the keys: origins from a few or any, topic
 * names as a decoded header allows (1..MSGA_TOPIC_MAX bytes, no NUL) plus
 * over-long ones. The input also moves the clock (from any start, so it
 * may wrap), ends memberships (msga__ustreams_evict_conn), evicts single
 * streams, and feeds sequence numbers into the streams it finds.
 *
 * Checked against a model written from ud_stream.h's rules:
 *  - the same key finds the same index; a new key takes the most recently
 *    freed index, else the next never used one, while n < max;
 *  - a full table evicts the least recently heard stream when it has been
 *    silent longer than idle_ns (never when idle_ns is 0), else refuses;
 *  - evict_conn forgets exactly the membership's streams, eviction tells
 *    on_evict first, and each evicted stream's counters go to the totals,
 *    which equal the model's and never decrease;
 *  - msga__ustreams_refused_first says 1 for a stream never told before
 *    and 0 when asked again before any other stream was told;
 *  - after every step n <= max and msga__ustreams_at finds at each index
 *    exactly the stream the model has there, heard when the model says,
 *    in the model's least-recently-heard order.
 *
 * Liveness (heartbeats, since 0.6): a HEARTBEAT datagram makes its stream
 * watched for the time it gives (or not watched, 0) and moves its sequence
 * position (msga__seq_advance); every datagram clears silent, as the
 * owner does. msga__ustreams_find looks up an END's stream: it must find
 * exactly the model's and neither add it nor count as hearing it.
 * msga__ustreams_scan_silent, with min_watch_ns the shortest watch time
 * (as the owner passes it) or any, must report exactly the streams of the
 * model's walk: least recently heard first, stopping at the first silent
 * for less than min_watch_ns, each watched stream silent for its watch
 * time or more and not yet reported; marked silent before it is told, and
 * so told once until heard again. With the shortest watch time, no stream
 * due is left unreported.
 */
#include <errno.h>
#include <string.h>

#include "msgaccel.h"
#include "ud_stream.h"
#include "fuzz.h"

#define MAX_STREAMS 16
#define MAX_REFUSED 64
#define MAX_CONNS 4

struct key {
	uint64_t origin;
	uint32_t len;
	char topic[MSGA_TOPIC_MAX + 2];
};

struct mstream {
	int used;
	struct key k;
	uint32_t conn_id;
	uint64_t last_ns;
	uint64_t watch_ns;
	int silent;
	struct msga__ustream_totals c;
};

struct refused {
	struct key k;
	uint64_t told_epoch; /* 0: never told */
};

struct model {
	struct mstream s[MAX_STREAMS];
	uint32_t n, max, top;
	uint32_t free_stack[MAX_STREAMS], nfree; /* top = most recently freed */
	uint32_t lru[MAX_STREAMS], nlru;         /* least recently heard first */
	uint64_t idle_ns, now, evicted;
	struct msga__ustream_totals gone;
	struct refused refused[MAX_REFUSED];
	uint32_t nrefused;
	uint64_t epoch; /* refusals told so far */
	/* on_evict's calls, checked against the model's evictions */
	const struct msga__ustreams *t;
	uint32_t told[MAX_STREAMS], ntold;
	uint32_t gone_idx[MAX_STREAMS], ngone;
	/* on_silent's calls in one scan */
	uint32_t silent_told[MAX_STREAMS], nsilent;
};

static int same_key(const struct key *a, const struct key *b)
{
	return a->origin == b->origin && a->len == b->len &&
	       !memcmp(a->topic, b->topic, a->len);
}

static int model_find(const struct model *m, const struct key *k)
{
	for (uint32_t i = 0; i < m->top; i++)
		if (m->s[i].used && same_key(&m->s[i].k, k))
			return (int)i;
	return -1;
}

static void lru_remove(struct model *m, uint32_t idx)
{
	for (uint32_t i = 0; i < m->nlru; i++)
		if (m->lru[i] == idx) {
			memmove(&m->lru[i], &m->lru[i + 1],
				(m->nlru - i - 1) * sizeof(m->lru[0]));
			m->nlru--;
			return;
		}
	FUZZ_CHECK(0);
}

static void add_totals(struct msga__ustream_totals *g,
		       const struct msga__ustream_totals *c)
{
	g->msgs += c->msgs;
	g->bytes += c->bytes;
	g->gaps += c->gaps;
	g->missing += c->missing;
	g->dups += c->dups;
	g->late += c->late;
	g->reasm_drops += c->reasm_drops;
}

static void model_evict(struct model *m, uint32_t idx)
{
	struct mstream *s = &m->s[idx];

	FUZZ_CHECK(s->used);
	add_totals(&m->gone, &s->c);
	m->evicted++;
	lru_remove(m, idx);
	memset(s, 0, sizeof(*s));
	m->free_stack[m->nfree++] = idx;
	m->n--;
	FUZZ_CHECK(m->ngone < MAX_STREAMS);
	m->gone_idx[m->ngone++] = idx;
}

/* The index a new stream gets, or -1 when the table refuses it. */
static int model_add(struct model *m, const struct key *k, uint32_t conn_id)
{
	uint32_t idx;

	if (m->n == m->max) {
		uint32_t oldest = m->lru[0];

		/* silent longer than idle_ns (the clock moves < 2^62) */
		if (!m->idle_ns || m->now - m->s[oldest].last_ns <= m->idle_ns)
			return -1;
		model_evict(m, oldest);
	}
	idx = m->nfree ? m->free_stack[--m->nfree] : m->top++;
	m->s[idx] = (struct mstream){ .used = 1, .k = *k, .conn_id = conn_id,
				      .last_ns = m->now };
	m->lru[m->nlru++] = idx;
	m->n++;
	return (int)idx;
}

static void on_evict(void *arg, uint32_t idx)
{
	struct model *m = arg;

	/* told before: the stream is still there */
	FUZZ_CHECK(msga__ustreams_at(m->t, idx));
	FUZZ_CHECK(m->ntold < MAX_STREAMS);
	m->told[m->ntold++] = idx;
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

static void check_stream(const struct msga__ustream *s, const struct key *k,
			 uint32_t conn_id)
{
	struct msga_stream_stats st;

	FUZZ_CHECK(s->used && s->origin == k->origin && s->conn_id == conn_id);
	FUZZ_CHECK(strlen(s->topic) == k->len &&
		   !memcmp(s->topic, k->topic, k->len));
	msga__ustream_stats(s, &st);
	FUZZ_CHECK(st.origin == k->origin && st.conn_id == conn_id);
	FUZZ_CHECK(!strcmp(st.topic, s->topic));
	FUZZ_CHECK(st.msgs == s->seq.c.delivered && st.bytes == s->bytes);
}

/* The owner feeds the datagram's sequence number and size in. */
static void deliver(struct fuzz_in *in, struct msga__ustream *s,
		    struct mstream *ms, uint32_t bytes)
{
	uint64_t seq = fuzz_u8(in), missing = 0;

	switch (msga__seq_accept(&s->seq, seq, &missing)) {
	case MSGA__SEQ_GAP:
		ms->c.gaps++;
		ms->c.missing += missing;
		/* fall through */
	case MSGA__SEQ_NEXT:
		ms->c.msgs++;
		break;
	case MSGA__SEQ_LATE:
		ms->c.msgs++;
		ms->c.late++;
		ms->c.missing--;
		break;
	case MSGA__SEQ_DUP:
		ms->c.dups++;
		break;
	default:
		break;
	}
	s->bytes += bytes;
	ms->c.bytes += bytes;
	if (seq % 16 == 1) {
		s->reasm_drops++;
		ms->c.reasm_drops++;
	}
}

static struct refused *refused_of(struct model *m, const struct key *k)
{
	for (uint32_t i = 0; i < m->nrefused; i++)
		if (same_key(&m->refused[i].k, k))
			return &m->refused[i];
	if (m->nrefused == MAX_REFUSED)
		return NULL; /* not modelled: no claim about it */
	m->refused[m->nrefused] = (struct refused){ .k = *k };
	return &m->refused[m->nrefused++];
}

/* A refused datagram: the owner raises the event the first time. */
static void refused(struct msga__ustreams *t, struct model *m,
		    const struct key *k, const char *topic)
{
	struct refused *r = refused_of(m, k);
	int first = msga__ustreams_refused_first(t, k->origin, topic, k->len);

	if (r && !r->told_epoch)
		FUZZ_CHECK(first == 1);
	else if (r && r->told_epoch == m->epoch)
		FUZZ_CHECK(first == 0); /* nobody else was told since */
	if (first) {
		m->epoch++;
		if (r)
			r->told_epoch = m->epoch;
	}
}

/* A HEARTBEAT: its watch time, then the tail it shows. */
static void heartbeat(struct msga__ustream *s, struct mstream *ms,
		      uint64_t watch_ns, struct fuzz_in *in)
{
	uint64_t first = 0, n;

	s->watch_ns = ms->watch_ns = watch_ns;
	n = msga__seq_advance(&s->seq, fuzz_u8(in), &first);
	if (n) {
		ms->c.gaps++;
		ms->c.missing += n;
	}
}

/* A DATA datagram (hb 0) or a HEARTBEAT (hb 1) of a stream. */
static void op_get(struct msga__ustreams *t, struct model *m,
		   struct fuzz_in *in, int hb)
{
	uint32_t conn_id = fuzz_u8(in) % MAX_CONNS;
	struct msga__ustream *s;
	uint64_t watch_ns;
	struct key k;
	char *topic;
	int idx;

	next_key(in, &k);
	m->now += fuzz_u8(in);
	watch_ns = hb ? fuzz_u16(in) : 0; /* 0: a publisher before 0.6 */
	/* Exactly the name's bytes: it is not NUL-terminated. */
	topic = fuzz_dup(k.topic, k.len);
	s = msga__ustreams_get(t, k.origin, topic, k.len, conn_id, m->now);
	if (k.len > MSGA_TOPIC_MAX) {
		FUZZ_CHECK(s == NULL);
		free(topic);
		return;
	}
	idx = model_find(m, &k);
	if (idx >= 0) {
		m->s[idx].last_ns = m->now;
		lru_remove(m, (uint32_t)idx);
		m->lru[m->nlru++] = (uint32_t)idx;
	} else {
		idx = model_add(m, &k, conn_id);
		if (idx >= 0)
			FUZZ_CHECK(s && s->seq.last == 0 && s->bytes == 0 &&
				   s->reasm_drops == 0);
	}
	if (idx < 0) {
		FUZZ_CHECK(s == NULL);
		refused(t, m, &k, topic);
	} else {
		FUZZ_CHECK(s && msga__ustreams_pos(t, s) == (uint32_t)idx);
		check_stream(s, &k, m->s[idx].conn_id);
		/* heard from: the owner clears silent (stream_heard) */
		s->silent = m->s[idx].silent = 0;
		if (hb)
			heartbeat(s, &m->s[idx], watch_ns, in);
		else
			deliver(in, s, &m->s[idx], k.len);
	}
	free(topic);
}

/* An END's lookup: found as the model has it, nothing else changes. */
static void op_find(struct msga__ustreams *t, struct model *m,
		    struct fuzz_in *in)
{
	struct msga__ustream *s;
	struct key k;
	char *topic;
	int idx;

	next_key(in, &k);
	topic = fuzz_dup(k.topic, k.len);
	s = msga__ustreams_find(t, k.origin, topic, k.len);
	idx = k.len > MSGA_TOPIC_MAX ? -1 : model_find(m, &k);
	if (idx < 0) {
		FUZZ_CHECK(s == NULL);
	} else {
		FUZZ_CHECK(s == &t->streams[idx]);
		check_stream(s, &k, m->s[idx].conn_id);
	}
	free(topic);
}

static void on_silent(void *arg, struct msga__ustream *s)
{
	struct model *m = arg;
	uint32_t idx = msga__ustreams_pos(m->t, s);
	const struct mstream *ms;

	FUZZ_CHECK(idx < m->top && m->t->streams[idx].used);
	ms = &m->s[idx];
	FUZZ_CHECK(ms->used);
	/* watched, silent long enough, and not told before */
	FUZZ_CHECK(s->watch_ns && s->watch_ns == ms->watch_ns);
	FUZZ_CHECK(m->now - ms->last_ns >= ms->watch_ns);
	FUZZ_CHECK(s->silent == 1 && !ms->silent);
	for (uint32_t i = 0; i < m->nsilent; i++)
		FUZZ_CHECK(m->silent_told[i] != idx);
	FUZZ_CHECK(m->nsilent < MAX_STREAMS);
	m->silent_told[m->nsilent++] = idx;
}

/* The shortest watch time of a stream in the table, 0 if none. */
static uint64_t min_watch(const struct model *m)
{
	uint64_t min = 0;

	for (uint32_t i = 0; i < m->top; i++)
		if (m->s[i].used && m->s[i].watch_ns &&
		    (!min || m->s[i].watch_ns < min))
			min = m->s[i].watch_ns;
	return min;
}

static void op_scan(struct msga__ustreams *t, struct model *m,
		    struct fuzz_in *in)
{
	uint8_t how = fuzz_u8(in);
	uint64_t min = min_watch(m), min_ns;
	uint32_t n, want = 0;

	/* as the owner passes it, or any (the walk may then stop early) */
	min_ns = (how & 1) && min ? min : fuzz_u16(in);
	m->nsilent = 0;
	n = msga__ustreams_scan_silent(t, m->now, min_ns, on_silent, m);
	FUZZ_CHECK(n == m->nsilent);
	for (uint32_t i = 0; i < m->nlru; i++) {
		struct mstream *ms = &m->s[m->lru[i]];
		uint64_t quiet = m->now - ms->last_ns; /* < 2^62 */

		if (quiet < min_ns)
			break;
		if (!ms->watch_ns || ms->silent || quiet < ms->watch_ns)
			continue;
		ms->silent = 1;
		FUZZ_CHECK(want < n && m->silent_told[want] == m->lru[i]);
		want++;
	}
	FUZZ_CHECK(want == n);
	if (min_ns > min && min)
		return;
	/* the shortest watch time: every stream due was told */
	for (uint32_t i = 0; i < m->top; i++) {
		const struct mstream *ms = &m->s[i];

		if (ms->used && ms->watch_ns && !ms->silent)
			FUZZ_CHECK(m->now - ms->last_ns < ms->watch_ns);
	}
}

static void op_evict_conn(struct msga__ustreams *t, struct model *m,
			  struct fuzz_in *in)
{
	uint32_t conn_id = fuzz_u8(in) % (MAX_CONNS + 1), n = 0;

	/* in index order, as the table walks it: the free list's order */
	for (uint32_t i = 0; i < m->top; i++)
		if (m->s[i].used && m->s[i].conn_id == conn_id) {
			model_evict(m, i);
			n++;
		}
	FUZZ_CHECK(msga__ustreams_evict_conn(t, conn_id) == n);
}

static void op_evict(struct msga__ustreams *t, struct model *m,
		     struct fuzz_in *in)
{
	uint32_t idx = fuzz_u8(in) % m->max;

	/* an index never or no longer in use: nothing happens */
	if (m->s[idx].used)
		model_evict(m, idx);
	msga__ustreams_evict(t, &t->streams[idx]);
}

/* The table equals the model: every index, the order, the totals. */
static void check_table(const struct msga__ustreams *t, struct model *m,
			const struct msga__ustream_totals *gone_before)
{
	const struct msga__ustream_totals *g = &t->gone;
	uint32_t pos;

	FUZZ_CHECK(t->n == m->n && t->n <= t->max);
	FUZZ_CHECK(t->evicted == m->evicted);
	FUZZ_CHECK(!memcmp(g, &m->gone, sizeof(*g)));
	FUZZ_CHECK(g->msgs >= gone_before->msgs &&
		   g->bytes >= gone_before->bytes &&
		   g->gaps >= gone_before->gaps &&
		   g->missing >= gone_before->missing &&
		   g->dups >= gone_before->dups &&
		   g->late >= gone_before->late &&
		   g->reasm_drops >= gone_before->reasm_drops);
	/* on_evict was told of each eviction, in the model's order */
	FUZZ_CHECK(m->ntold == m->ngone);
	for (uint32_t i = 0; i < m->ntold; i++)
		FUZZ_CHECK(m->gone_idx[i] == m->told[i]);
	m->ntold = m->ngone = 0;
	for (uint32_t i = 0; i < MAX_STREAMS + 2; i++) {
		const struct msga__ustream *s = msga__ustreams_at(t, i);

		if (i >= MAX_STREAMS || !m->s[i].used) {
			FUZZ_CHECK(s == NULL);
			continue;
		}
		FUZZ_CHECK(s);
		check_stream(s, &m->s[i].k, m->s[i].conn_id);
		FUZZ_CHECK(s->seq.c.delivered == m->s[i].c.msgs &&
			   s->seq.c.dups == m->s[i].c.dups &&
			   s->seq.c.gaps == m->s[i].c.gaps &&
			   s->seq.c.missing == m->s[i].c.missing);
		FUZZ_CHECK(s->last_ns == m->s[i].last_ns);
		FUZZ_CHECK(s->watch_ns == m->s[i].watch_ns &&
			   s->silent == m->s[i].silent);
	}
	/* the whole order, least recently heard first */
	pos = t->lru.head;
	for (uint32_t i = 0; i < m->nlru; i++) {
		FUZZ_CHECK(pos == m->lru[i] + 1);
		pos = t->streams[pos - 1].lru.next;
	}
	FUZZ_CHECK(pos == 0);
}

static uint64_t choose_idle(struct fuzz_in *in)
{
	switch (fuzz_u8(in) % 3) {
	case 0:
		return 0; /* never evicted for silence */
	case 1:
		return fuzz_u8(in);
	default:
		return fuzz_u32(in);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct msga__ustreams t;
	static struct model m;

	memset(&m, 0, sizeof(m));
	FUZZ_CHECK(msga__ustreams_init(&t, 0, 0) == -EINVAL);
	m.max = (uint32_t)fuzz_range(&in, 1, MAX_STREAMS);
	FUZZ_CHECK(msga__ustreams_init(&t, m.max, 0) == 0);
	t.idle_ns = m.idle_ns = choose_idle(&in);
	m.now = fuzz_u64(&in); /* any start: the clock may wrap */
	t.on_evict = on_evict;
	t.evict_arg = &m;
	m.t = &t;
	while (fuzz_left(&in)) {
		struct msga__ustream_totals gone = t.gone;
		uint8_t op = fuzz_u8(&in);

		if (op < 192) {
			op_get(&t, &m, &in, 0);
		} else if (op < 216) {
			m.now += fuzz_u32(&in); /* < 2^62 over any run */
		} else if (op < 236) {
			op_evict_conn(&t, &m, &in);
		} else if (op < 244) {
			op_evict(&t, &m, &in);
		} else if (op < 248) {
			op_get(&t, &m, &in, 1);
		} else if (op < 252) {
			op_scan(&t, &m, &in);
		} else {
			op_find(&t, &m, &in);
		}
		check_table(&t, &m, &gone);
	}
	msga__ustreams_fini(&t);
	return 0;
}
