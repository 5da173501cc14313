/* SPDX-License-Identifier: MIT */
/*
 * keyring.c - loading a context's keys (auth.h): a key file, checked as
 * ssh checks a private key (a regular file its owner alone may read), or
 * one key given in the attributes. Keys live in sodium_malloc()ed memory:
 * locked out of swap and core dumps, wiped when freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "internal.h"
#include "keyfile.h"

/* Far more than MSGA_KEYS_MAX lines need: a bigger file is a mistake. */
#define KEYFILE_MAX_BYTES (64u * 1024u)

/* Record err, "WHO: text", where sink says; returns err. */
__attribute__((format(printf, 3, 4)))
static int kr_fail(const struct msga__kr_sink *sink, int err,
		   const char *fmt, ...)
{
	char text[MSGA_ERRBUF_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (sink->ctx)
		return msga__ctx_fail(sink->ctx, err, "%s: %s", sink->who,
				      text);
	return msga__open_fail(err, "%s: %s", sink->who, text);
}

static struct msga__keyring *ring_alloc(uint32_t n)
{
	struct msga__keyring *kr = sodium_malloc(sizeof(*kr) +
						 n * sizeof(kr->keys[0]));

	if (!kr)
		return NULL;
	kr->n = n;
	kr->refs = 1;
	for (uint32_t i = 0; i < n; i++)
		kr->keys[i].ring = kr;
	return kr;
}

/* Give each key its id; the same key twice is a mistake we refuse. */
static int ring_finish(struct msga__keyring *kr,
		       const struct msga__kr_sink *sink)
{
	for (uint32_t i = 0; i < kr->n; i++) {
		kr->keys[i].id = msga__auth_key_id(kr->keys[i].key);
		for (uint32_t j = 0; j < i; j++)
			if (kr->keys[j].id == kr->keys[i].id)
				return kr_fail(sink, -EINVAL, "keys '%s' and "
					       "'%s' are the same key",
					       kr->keys[j].name,
					       kr->keys[i].name);
	}
	return 0;
}

static int read_keyfile(const char *path, const struct msga__kr_sink *sink,
			char *text, size_t *len)
{
	struct stat st;
	ssize_t got;
	/* (O_NONBLOCK: a FIFO would block the open; it is refused below) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	int err;

	if (fd < 0) {
		err = errno == ENOENT || errno == ENOTDIR ? -ENOENT :
		      errno == ELOOP ? -EPERM :
		      errno == ENAMETOOLONG ? -EINVAL : -EACCES;
		return kr_fail(sink, err, "key_file '%s': %s", path,
			       strerror(-err));
	}
	err = 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		err = kr_fail(sink, -EINVAL, "key_file '%s' is not a "
			      "regular file", path);
	else if (st.st_mode & (S_IRWXG | S_IRWXO))
		err = kr_fail(sink, -EPERM, "key_file '%s' is open to "
			      "others (mode %03o): chmod 600 it", path,
			      (unsigned)(st.st_mode & 0777));
	else if (st.st_uid != geteuid())
		err = kr_fail(sink, -EPERM, "key_file '%s' is not ours "
			      "(uid %u)", path, (unsigned)st.st_uid);
	else if (st.st_size > KEYFILE_MAX_BYTES)
		err = kr_fail(sink, -EINVAL, "key_file '%s' is over %u "
			      "bytes", path, KEYFILE_MAX_BYTES);
	if (!err) {
		got = read(fd, text, KEYFILE_MAX_BYTES);
		if (got < 0)
			err = kr_fail(sink, -EACCES, "key_file '%s': read "
				      "failed", path);
		else
			*len = (size_t)got;
	}
	close(fd);
	return err;
}

int msga__keyring_load_file(const char *path, const struct msga__kr_sink *sink,
			    struct msga__keyring **out)
{
	struct msga__keyfile_entry *ents;
	struct msga__keyring *kr = NULL;
	char *text = sodium_malloc(KEYFILE_MAX_BYTES);
	uint32_t bad_line;
	size_t len = 0;
	int n, ret;

	ents = sodium_malloc(MSGA_KEYS_MAX * sizeof(*ents));
	if (!text || !ents) {
		ret = kr_fail(sink, -ENOMEM, "key_file");
		goto out;
	}
	ret = read_keyfile(path, sink, text, &len);
	if (ret)
		goto out;
	n = msga__keyfile_parse(text, len, ents, MSGA_KEYS_MAX, &bad_line);
	if (n < 0) {
		ret = bad_line ?
			kr_fail(sink, -EINVAL, "key_file '%s' line %u: not "
				"\"NAME HEX\" (%u hex digits), or a NAME used "
				"before, or past %u keys", path, bad_line,
				2 * MSGA_KEY_LEN, MSGA_KEYS_MAX) :
			kr_fail(sink, -EINVAL, "key_file '%s' has no key",
				path);
		goto out;
	}
	kr = ring_alloc((uint32_t)n);
	if (!kr) {
		ret = kr_fail(sink, -ENOMEM, "key_file");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		memcpy(kr->keys[i].name, ents[i].name, sizeof(ents[i].name));
		memcpy(kr->keys[i].key, ents[i].key, MSGA_KEY_LEN);
	}
	ret = ring_finish(kr, sink);
out:
	sodium_free(text); /* (wipes) */
	sodium_free(ents);
	if (ret)
		sodium_free(kr);
	else
		*out = kr;
	return ret;
}

int msga__keyring_load(const struct msga_ctx_attr *attr,
		       struct msga__keyring **out)
{
	static const struct msga__kr_sink sink = { NULL, "msga_ctx_open" };
	const char *name;
	struct msga__keyring *kr;

	*out = NULL;
	if (attr->size < offsetof(struct msga_ctx_attr, key_name) +
			 sizeof(attr->key_name))
		return 0;
	if (!attr->key_file && !attr->key && !attr->key_name)
		return 0;
	/* (before anything else: libsodium is initialised once, thread-safe) */
	if (sodium_init() < 0)
		return msga__open_fail(-ENOMEM, "msga_ctx_open: sodium_init");
	if (attr->key_file && (attr->key || attr->key_name))
		return msga__open_fail(-EINVAL, "msga_ctx_open: key_file and "
				       "key are exclusive");
	if (attr->key_file)
		return msga__keyring_load_file(attr->key_file, &sink, out);
	if (!attr->key)
		return msga__open_fail(-EINVAL, "msga_ctx_open: key_name "
				       "without key");
	name = attr->key_name ? attr->key_name : "default";
	if (msga__key_name_check(name))
		return msga__open_fail(-EINVAL, "msga_ctx_open: key_name is "
				       "not 1 to %u of [A-Za-z0-9._@-]",
				       MSGA_KEY_NAME_MAX);
	kr = ring_alloc(1);
	if (!kr)
		return msga__open_fail(-ENOMEM, "msga_ctx_open: key");
	snprintf(kr->keys[0].name, sizeof(kr->keys[0].name), "%s", name);
	memcpy(kr->keys[0].key, attr->key, MSGA_KEY_LEN);
	if (ring_finish(kr, &sink)) {
		sodium_free(kr);
		return -EINVAL;
	}
	*out = kr;
	return 0;
}

void msga__keyring_put(struct msga__keyring *kr)
{
	if (kr && !--kr->refs)
		sodium_free(kr); /* (wipes) */
}

const struct msga__key *msga__key_hold(const struct msga__key *key)
{
	if (key)
		key->ring->refs++;
	return key;
}

void msga__key_put(const struct msga__key *key)
{
	if (key)
		msga__keyring_put(key->ring);
}

const struct msga__key *msga__keyring_find(const struct msga__keyring *kr,
					   uint64_t id)
{
	if (!kr || !id)
		return NULL;
	for (uint32_t i = 0; i < kr->n; i++)
		if (kr->keys[i].id == id)
			return &kr->keys[i];
	return NULL;
}
