/* SPDX-License-Identifier: MIT */
/*
 * auth.h - a context's keys (keyring.c) and the keyed primitives built on
 * them (auth.c), all from libsodium: msgaccel has no cryptography of its
 * own. msgaccel(7), SECURITY, says what each is for.
 *
 *  - a tag: BLAKE2b keyed with a key, over a label naming its purpose
 *    and the bytes it covers, cut to 16 bytes; compared in constant time;
 *  - a key id: a tag over nothing, so that a connect names the key it
 *    will prove without giving the key away;
 *  - derived values (the Q_Key, a datagram MAC key): BLAKE2b keyed with
 *    the key over a label, so that no two uses share a key.
 */
#ifndef MSGA_AUTH_H
#define MSGA_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "auth_wire.h"
#include "msgaccel.h"

struct msga__keyring;

struct msga__key {
	char name[MSGA_KEY_NAME_MAX + 1];
	uint8_t key[MSGA_KEY_LEN];
	uint64_t id;               /* msga__auth_key_id(key) */
	struct msga__keyring *ring; /* the ring it is in (msga__key_hold) */
};

/*
 * A context's keys, in memory libsodium locks and wipes; [0] its own.
 * Counted: the context holds its current ring (and the one a reload
 * replaced, while it overlaps: key_gen.c), and each connection that
 * proved or accepted a key holds that key's ring, so a reload never
 * frees a key an established connection still names.
 */
struct msga__keyring {
	uint32_t n;
	uint32_t refs;
	struct msga__key keys[];
};

/*
 * Where a key loader's failure goes: NULL for msga_ctx_open()
 * (msga__open_fail), or the context a reload is for (msga__ctx_fail);
 * who prefixes the text ("msga_ctx_open", "msga_ctx_reload_keys").
 */
struct msga__kr_sink {
	struct msga_ctx *ctx;
	const char *who;
};

/*
 * Keys of msga_ctx_attr (key_file, or key and key_name): 0 with *out set
 * (NULL when the attributes name none; else one reference, the
 * caller's), or a negative errno with the reason recorded by
 * msga__open_fail(): -EINVAL (both given, a bad file or name), -ENOENT,
 * -EACCES (unreadable), -EPERM (the file is readable by others than its
 * owner), -ENOMEM.
 */
int msga__keyring_load(const struct msga_ctx_attr *attr,
		       struct msga__keyring **out);
/* The same from a key file alone, failures going to sink. */
int msga__keyring_load_file(const char *path, const struct msga__kr_sink *sink,
			    struct msga__keyring **out);
/* Drop one reference to kr (NULL: nothing); the last frees and wipes. */
void msga__keyring_put(struct msga__keyring *kr);
const struct msga__key *msga__keyring_find(const struct msga__keyring *kr,
					   uint64_t id);
/* A connection keeps key (NULL: nothing) past a reload; put it back. */
const struct msga__key *msga__key_hold(const struct msga__key *key);
void msga__key_put(const struct msga__key *key);

/* Bytes a tag covers: a list of pieces. */
struct msga__auth_piece {
	const void *p;
	size_t n;
};

uint64_t msga__auth_key_id(const uint8_t key[MSGA_KEY_LEN]);
void msga__auth_tag(const uint8_t key[MSGA_KEY_LEN], const char *label,
		    const struct msga__auth_piece *pieces, int npieces,
		    uint8_t tag[MSGA__AUTH_TAG_LEN]);
/* 1 if a and b (tags) are equal, in time that does not depend on them. */
int msga__auth_tag_equal(const uint8_t *a, const uint8_t *b);
void msga__auth_random(void *buf, size_t n);
void msga__auth_derive(const uint8_t key[MSGA_KEY_LEN], const char *label,
		       void *out, size_t n);
/*
 * The Q_Key of an authenticated context's UD queue pairs: derived from
 * its own key, never rdma_cm's well-known default, and with bit 31 clear
 * (Q_Keys with it set are the privileged "controlled" ones).
 */
uint32_t msga__auth_qkey(const uint8_t key[MSGA_KEY_LEN]);

#endif
