/* SPDX-License-Identifier: MIT */
/* topic.h - topic name and subscription pattern rules (topic.c). */
#ifndef MSGA_TOPIC_H
#define MSGA_TOPIC_H

/* 0 if name is a valid topic name, else -EINVAL. */
int msga__topic_check(const char *name);
/* 0 if pat is a valid pattern ("name" or "prefix*"), else -EINVAL. */
int msga__pattern_check(const char *pat);
/* Nonzero if name matches pattern pat (both already checked). */
int msga__topic_match(const char *pat, const char *name);

#endif
