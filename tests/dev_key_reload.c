/* SPDX-License-Identifier: MIT */
/*
 * dev_key_reload.c - msga_ctx_reload_keys() on real verbs (issue 36 item
 * 8): a publisher's key file rewritten and reloaded while a subscriber's
 * connection is in flight. The connection goes on; a key removed from the
 * file is still accepted from a new peer during the overlap and refused
 * after it; a key added is accepted at once; a subscriber that reloads
 * proves its new key on its next connection; a failed reload changes
 * nothing. Multicast endpoints keep the Q_Key they were made with.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

static char dir[64];

static void dir_make(void)
{
	snprintf(dir, sizeof(dir), "/tmp/msga-keys-XXXXXX");
	cr_assert(mkdtemp(dir), "mkdtemp");
}

static void dir_remove(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(key_reload, .init = dir_make, .fini = dir_remove);

/* "NAME HEX" for key k, whose 32 bytes are all fill. */
static void key_line(char *out, size_t n, const char *name, int fill)
{
	size_t at = (size_t)snprintf(out, n, "%s ", name);

	for (unsigned i = 0; i < MSGA_KEY_LEN; i++)
		at += (size_t)snprintf(out + at, n - at, "%02x", fill);
	snprintf(out + at, n - at, "\n");
}

/* Write file (in dir) with the keys "NAME:FILL,...", at mode. */
static const char *key_file(const char *file, const char *keys, mode_t mode)
{
	static char path[2][128];
	static int which;
	char text[1024] = "", line[128], name[32];
	const char *p = keys;
	char *out = path[which++ % 2];
	int fill, used, fd;

	while (sscanf(p, "%31[^:]:%i%n", name, &fill, &used) == 2) {
		key_line(line, sizeof(line), name, fill);
		strcat(text, line);
		p += used;
		p += *p == ',';
	}
	snprintf(out, sizeof(path[0]), "%s/%s", dir, file);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0, "open %s", out);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	cr_assert_eq(fchmod(fd, mode), 0);
	close(fd);
	return out;
}

static struct msga_ctx *ctx_file(const char *path)
{
	struct msga_ctx_attr a = { .size = sizeof(a) };
	struct msga_ctx *ctx = NULL;
	int ret;

	a.dev_name = devtest_env()->dev;
	a.key_file = path;
	ret = msga_ctx_open(&a, &ctx);
	cr_assert_eq(ret, 0, "msga_ctx_open(%s) = %d: %s", path, ret,
		     msga_open_error());
	return ctx;
}

/* A subscriber of "kr.*" whose context proves key NAME:FILL. */
struct peer {
	struct msga_ctx *ctx;
	struct msga_sub *sub;
	struct dp_rec rec;
};

static void peer_open(struct peer *p, const char *file, const char *key,
		      uint32_t sub_flags)
{
	memset(p, 0, sizeof(*p));
	p->ctx = ctx_file(key_file(file, key, 0600));
	p->sub = dp_sub_flags(p->ctx, "kr.*", sub_flags, &p->rec);
}

static void peer_close(struct peer *p)
{
	msga_sub_destroy(p->sub);
	msga_ctx_close(p->ctx);
}

/*
 * Connect p to pub (polling pc too) until it is connected or refused:
 * 0, or the refusal's status.
 */
static int peer_connect(struct peer *p, struct msga_pub *pub,
			struct msga_ctx *pc)
{
	int ret = dp_connect_id(p->sub, dp_uri((uint16_t)msga_pub_port(pub)));
	uint64_t end = dp_now_ms() + devtest_wait_s(10) * 1000ull;

	cr_assert_geq(ret, 0, "msga_sub_connect = %d", ret);
	while (!p->rec.connected && !p->rec.failed && !p->rec.disconnected) {
		cr_assert_lt(dp_now_ms(), end, "no connect outcome");
		cr_assert_geq(msga_ctx_poll(pc, 64), 0);
		cr_assert_geq(msga_ctx_poll(p->ctx, 64), 0);
	}
	return p->rec.connected ? 0 : p->rec.last_status;
}

/* Send n messages from seq on and wait until p has them all. */
static void stream(struct msga_pub *pub, uint32_t t, uint64_t seq, int n,
		   struct msga_ctx *pc, struct peer *p)
{
	struct msga_ctx *ctxs[2] = { pc, p->ctx };
	uint64_t want = p->rec.total + (uint64_t)n;

	for (int i = 0; i < n; i++)
		dp_send(pub, t, seq + (uint64_t)i, 40, ctxs, 2);
	cr_assert(dp_poll_until64(ctxs, 2, &p->rec.total, want, 10000),
		  "got %llu of %llu", (unsigned long long)p->rec.total,
		  (unsigned long long)want);
	cr_assert_eq(p->rec.bad, 0, "%s", p->rec.first_bad);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * The publisher holds "old"; it reloads a file with "new" instead, the
 * "old" connection in flight. With an overlap, "old" may still connect;
 * past it, not; "new" may at once.
 */
static void reload_in_flight(uint32_t sub_flags)
{
	const char *pf = key_file("pub", "pub:0x11,old:0x22", 0600);
	struct msga_ctx *pc = ctx_file(pf);
	struct dp_rec pe = { 0 };
	struct msga_pub *pub = dp_pub(pc, 0, &pe);
	struct peer live, late, fresh, revoked;
	uint32_t t;
	int ret;

	cr_assert_eq(msga_pub_topic(pub, "kr.t", &t), 0);
	peer_open(&live, "live", "old:0x22", sub_flags);
	cr_assert_eq(peer_connect(&live, pub, pc), 0);
	stream(pub, t, 1, 100, pc, &live);

	key_file("pub", "pub2:0x33,new:0x44", 0600);
	ret = msga_ctx_reload_keys(pc, 60000);
	cr_assert_eq(ret, 0, "reload = %d: %s", ret, msga_ctx_last_error(pc));
	/* The connection made with the old file goes on. */
	stream(pub, t, 101, 100, pc, &live);

	/* "old" is gone from the file, but overlaps: still accepted. */
	peer_open(&late, "late", "old:0x22", 0);
	cr_assert_eq(peer_connect(&late, pub, pc), 0, "%s",
		     msga_ctx_last_error(late.ctx));
	peer_open(&fresh, "fresh", "new:0x44", 0);
	cr_assert_eq(peer_connect(&fresh, pub, pc), 0, "%s",
		     msga_ctx_last_error(fresh.ctx));

	/* A reload with a short overlap, and past it: "old" is refused. */
	cr_assert_eq(msga_ctx_reload_keys(pc, 1), 0, "%s",
		     msga_ctx_last_error(pc));
	sleep_ms(20);
	peer_open(&revoked, "revoked", "old:0x22", 0);
	cr_assert_eq(peer_connect(&revoked, pub, pc), -EACCES);

	/* Everyone connected before is still there and served. */
	stream(pub, t, 201, 50, pc, &live);
	cr_assert_eq(msga_pub_subscribers(pub), 3);
	cr_assert_eq(late.rec.total, 0); /* (joined after seq 200: no history) */
	peer_close(&revoked);
	peer_close(&fresh);
	peer_close(&late);
	peer_close(&live);
	msga_pub_destroy(pub);
	msga_ctx_close(pc);
}

DP_TEST_RC_PATHS(key_reload, in_flight_ring, in_flight_send_recv,
		 reload_in_flight, 120)

/* A subscriber that reloads proves its new own key on its next connect. */
Test(key_reload, subscriber_proves_new_key, .timeout = 90)
{
	struct msga_ctx *pc = ctx_file(key_file("pub", "b:0x55", 0600));
	struct dp_rec pe = { 0 };
	struct msga_pub *pub = dp_pub(pc, 0, &pe);
	struct peer p;

	peer_open(&p, "sub", "a:0x66", 0);
	cr_assert_eq(peer_connect(&p, pub, pc), -EACCES);
	key_file("sub", "b:0x55", 0600);
	cr_assert_eq(msga_ctx_reload_keys(p.ctx, 0), 0, "%s",
		     msga_ctx_last_error(p.ctx));
	p.rec.failed = p.rec.disconnected = 0;
	cr_assert_eq(peer_connect(&p, pub, pc), 0, "%s",
		     msga_ctx_last_error(p.ctx));
	peer_close(&p);
	msga_pub_destroy(pub);
	msga_ctx_close(pc);
}

/* Each documented error; after any of them the keys in use still work. */
Test(key_reload, documented_errors, .timeout = 90)
{
	const char *pf = key_file("pub", "pub:0x11,old:0x22", 0600);
	struct msga_ctx *pc = ctx_file(pf);
	struct msga_ctx_attr a = { .size = sizeof(a) };
	static const uint8_t k[MSGA_KEY_LEN] = { 7 };
	struct msga_ctx *inline_keyed = NULL, *unkeyed = devtest_open_ctx();
	struct dp_rec pe = { 0 };
	struct msga_pub *pub = dp_pub(pc, 0, &pe);
	struct peer p;

	cr_assert_eq(msga_ctx_reload_keys(NULL, 0), -EINVAL);
	cr_assert_eq(msga_ctx_reload_keys(unkeyed, 0), -EINVAL);
	cr_assert(strstr(msga_ctx_last_error(unkeyed), "key_file"));
	a.dev_name = devtest_env()->dev;
	a.key = k;
	cr_assert_eq(msga_ctx_open(&a, &inline_keyed), 0);
	cr_assert_eq(msga_ctx_reload_keys(inline_keyed, 0), -EINVAL);
	cr_assert_eq(msga_ctx_reload_keys(pc, MSGA_KEY_OVERLAP_MAX_MS + 1),
		     -EINVAL);

	key_file("pub", "new:0x44", 0644);
	cr_assert_eq(msga_ctx_reload_keys(pc, 0), -EPERM);
	cr_assert(strstr(msga_ctx_last_error(pc), "msga_ctx_reload_keys"),
		  "%s", msga_ctx_last_error(pc));
	key_file("pub", "not a key line", 0600);
	cr_assert_eq(msga_ctx_reload_keys(pc, 0), -EINVAL);
	cr_assert_eq(unlink(pf), 0);
	cr_assert_eq(msga_ctx_reload_keys(pc, 0), -ENOENT);
	cr_assert_eq(mkdir(pf, 0700), 0);
	cr_assert_eq(msga_ctx_reload_keys(pc, 0), -EINVAL);
	cr_assert_eq(rmdir(pf), 0);

	/* None of those changed the keys: "old" still connects. */
	peer_open(&p, "sub", "old:0x22", 0);
	cr_assert_eq(peer_connect(&p, pub, pc), 0, "%s",
		     msga_ctx_last_error(p.ctx));
	peer_close(&p);
	msga_pub_destroy(pub);
	msga_ctx_close(inline_keyed);
	msga_ctx_close(unkeyed);
	msga_ctx_close(pc);
}

/*
 * Multicast: a membership and a publisher made before a reload keep
 * their Q_Key and MAC key and go on; a pair made after it uses the new
 * key. On iWARP, the documented refusal.
 */
#define G_RELOAD "mcast://239.255.10.40"
#define G_AFTER "mcast://239.255.10.41"

struct mc_pair {
	struct msga_pub *pub;
	struct msga_sub *sub;
	struct dp_rec pe, rec;
	uint32_t t;
};

static void mc_pair_open(struct mc_pair *m, struct msga_ctx **ctxs,
			 const char *uri)
{
	memset(m, 0, sizeof(*m));
	m->pub = dp_pub_at(ctxs[0], uri, MSGA_PUB_MAC, &m->pe);
	cr_assert_eq(msga_pub_topic(m->pub, "kr.m", &m->t), 0);
	cr_assert(dp_poll_until(ctxs, 2, &m->pe.connected, 1, 10000),
		  "publisher's join: status %d", m->pe.last_status);
	m->sub = dp_sub_flags(ctxs[1], "kr.*", MSGA_SUB_REQUIRE_MAC, &m->rec);
	cr_assert_geq(msga_sub_connect(m->sub, uri, NULL), 0, "%s",
		      msga_ctx_last_error(ctxs[1]));
	cr_assert(dp_poll_until(ctxs, 2, &m->rec.connected, 1, 10000),
		  "subscriber's join: status %d", m->rec.last_status);
}

/* n messages, each waited for (no loss by overrun). */
static void mc_stream(struct mc_pair *m, struct msga_ctx **ctxs, uint64_t seq,
		      int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t want = m->rec.total + 1;

		dp_send(m->pub, m->t, seq + (uint64_t)i, 64, ctxs, 2);
		cr_assert(dp_poll_until64(ctxs, 2, &m->rec.total, want, 10000),
			  "message %llu not received (forged %llu)",
			  (unsigned long long)(seq + (uint64_t)i),
			  (unsigned long long)dp_sub_stats(m->sub).forged);
	}
	cr_assert_eq(m->rec.bad, 0, "%s", m->rec.first_bad);
}

Test(key_reload, multicast_endpoints_keep_their_key, .timeout = 120)
{
	struct msga_ctx *ctxs[2];
	struct mc_pair before, after;

	ctxs[0] = ctx_file(key_file("pub", "grp:0x77", 0600));
	ctxs[1] = ctx_file(key_file("sub", "grp:0x77", 0600));
	if (dp_iwarp_refuses(G_RELOAD)) {
		msga_ctx_close(ctxs[1]);
		msga_ctx_close(ctxs[0]);
		return;
	}
	mc_pair_open(&before, ctxs, G_RELOAD);
	mc_stream(&before, ctxs, 1, 20);
	key_file("pub", "grp2:0x78", 0600);
	key_file("sub", "grp2:0x78", 0600);
	cr_assert_eq(msga_ctx_reload_keys(ctxs[0], 0), 0);
	cr_assert_eq(msga_ctx_reload_keys(ctxs[1], 0), 0);
	mc_stream(&before, ctxs, 21, 20);
	mc_pair_open(&after, ctxs, G_AFTER);
	mc_stream(&after, ctxs, 1, 20);
	cr_assert_eq(dp_sub_stats(before.sub).forged, 0);
	cr_assert_eq(dp_sub_stats(after.sub).forged, 0);
	msga_sub_destroy(after.sub);
	msga_pub_destroy(after.pub);
	msga_sub_destroy(before.sub);
	msga_pub_destroy(before.pub);
	msga_ctx_close(ctxs[1]);
	msga_ctx_close(ctxs[0]);
}
