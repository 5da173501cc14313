/* SPDX-License-Identifier: MIT */
/* stat_topics.h - msga_stat --topics: what is advertised on a resolver
 * group, through the public API (msga_resolver_browse(3)). */
#ifndef MSGA_STAT_TOPICS_H
#define MSGA_STAT_TOPICS_H

#include <signal.h>

struct topics_opts {
	const char *dev, *bind;    /* -d, -b */
	const char *group;         /* -g, NULL: the library's default */
	const char *key_file;      /* -k */
	const char *pattern;       /* -t */
	double duration;           /* -D: listen this long, then print */
	int json;
	volatile sig_atomic_t *stop;
};

/* Listen, then print: exit status 0, or 1 (a runtime error). */
int msga_stat_topics(const struct topics_opts *o);

#endif
