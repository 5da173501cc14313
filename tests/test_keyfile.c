/* SPDX-License-Identifier: MIT */
/*
 * The text of a key file (lib/proto/keyfile.c): what it accepts, and for
 * each refusal the 1-based line msga_ctx_open() will name. The text is
 * always an exact-size heap copy with no NUL after it, so AddressSanitizer
 * sees a parser that reads past what it was given.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "keyfile.h"

#define HEX_A "000102030405060708090a0b0c0d0e0f" \
	      "101112131415161718191a1b1c1d1e1f"
#define HEX_B "FFEEDDCCBBAA99887766554433221100" \
	      "f0e1d2c3b4a5968778695a4b3c2d1e0f"
#define NAME31 "abcdefghijklmnopqrstuvwxyz01234"

static struct msga__keyfile_entry ents[MSGA_KEYS_MAX + 1];
static uint32_t bad;

/* msga__keyfile_parse over text[0, n), copied to exactly n heap bytes. */
static int parse_n(const char *text, size_t n, uint32_t max)
{
	char *copy = malloc(n ? n : 1);
	int ret;

	cr_assert_not_null(copy);
	memcpy(copy, text, n);
	memset(ents, 0xa5, sizeof(ents));
	bad = 0xdead;
	ret = msga__keyfile_parse(copy, n, ents, max, &bad);
	free(copy);
	return ret;
}

static int parse(const char *text)
{
	return parse_n(text, strlen(text), MSGA_KEYS_MAX);
}

/* The keys HEX_A and HEX_B spell. */
static const uint8_t key_a[MSGA_KEY_LEN] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
};
static const uint8_t key_b[MSGA_KEY_LEN] = {
	0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88,
	0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00,
	0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87,
	0x78, 0x69, 0x5a, 0x4b, 0x3c, 0x2d, 0x1e, 0x0f,
};

static void expect_entry(unsigned int i, const char *name,
			 const uint8_t *key)
{
	cr_expect_str_eq(ents[i].name, name, "entry %u", i);
	cr_expect_arr_eq(ents[i].key, key, MSGA_KEY_LEN, "entry %u", i);
}

/* text holds alice's key A, then bob's key B, and nothing else. */
static void expect_alice_bob(const char *text)
{
	cr_assert_eq(parse(text), 2);
	expect_entry(0, "alice", key_a);
	expect_entry(1, "bob", key_b);
}

/* A refusal, and the line it names. */
static void expect_bad(int ret, uint32_t line, const char *what)
{
	cr_expect_eq(ret, -EINVAL, "%s: ret %d", what, ret);
	cr_expect_eq(bad, line, "%s: bad_line %u, want %u", what, bad, line);
}

Test(keyfile, one_key)
{
	cr_assert_eq(parse("alice " HEX_A "\n"), 1);
	expect_entry(0, "alice", key_a);
	cr_expect_eq(bad, 0, "bad_line is 0 on success");
}

Test(keyfile, last_line_without_newline)
{
	cr_assert_eq(parse("alice " HEX_A), 1);
	expect_entry(0, "alice", key_a);
}

Test(keyfile, several_with_comments_and_blank_lines)
{
	const char *text = "# our keys\n"
			   "\n"
			   "alice " HEX_A "\n"
			   "   # indented comment, " HEX_A "\n"
			   "   \t \n"
			   "bob " HEX_B "\n"
			   "#\n";

	expect_alice_bob(text);
}

Test(keyfile, crlf_tabs_and_blanks_around)
{
	const char *text = "# written on Windows\r\n"
			   "\r\n"
			   "\t alice\t\t" HEX_A " \t\r\n"
			   "bob\t" HEX_B "\r\n";

	expect_alice_bob(text);
}

Test(keyfile, upper_and_lower_hex_are_the_same_key)
{
	char line[128];
	size_t n = (size_t)snprintf(line, sizeof(line), "up %s\n", HEX_A);

	for (size_t i = 0; i < n; i++)
		if (line[i] >= 'a' && line[i] <= 'f')
			line[i] = (char)(line[i] - 'a' + 'A');
	cr_assert_eq(parse(line), 1);
	expect_entry(0, "up", key_a);
	/* and mixed within one key */
	cr_assert_eq(parse("m 000102030405060708090A0B0C0D0E0F"
			   "101112131415161718191a1B1c1D1e1F\n"), 1);
	expect_entry(0, "m", key_a);
}

Test(keyfile, every_name_char_and_longest_name)
{
	cr_assert_eq(parse("Az09._@- " HEX_A "\n"
			   "user@host.example-1_2 " HEX_B "\n"
			   NAME31 " " HEX_A "\n"), 3);
	cr_expect_str_eq(ents[0].name, "Az09._@-");
	cr_expect_str_eq(ents[1].name, "user@host.example-1_2");
	cr_expect_str_eq(ents[2].name, NAME31);
	cr_expect_eq(strlen(ents[2].name), MSGA_KEY_NAME_MAX);
	/* a name of one char, and one made of hex digits */
	cr_assert_eq(parse("a " HEX_A "\nbeef " HEX_B "\n"), 2);
	cr_expect_str_eq(ents[1].name, "beef");
}

Test(keyfile, exactly_max_keys)
{
	cr_assert_eq(parse_n("a " HEX_A "\nb " HEX_B "\n",
			     strlen("a " HEX_A "\nb " HEX_B "\n"), 2), 2);
	expect_entry(1, "b", key_b);
	cr_expect_eq((uint8_t)ents[2].name[0], 0xa5, "nothing past max");
}

Test(keyfile, bad_name_chars)
{
	static const char *const names[] = {
		"al!ce", "alice:", "a/b", "a#b", "a,b", "a\"b", "\xc3\xa9t\xc3\xa9",
		"a\x7f", "a+b", "a=b", "(a)",
	};
	char line[160];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(line, sizeof(line), "ok " HEX_B "\n%s " HEX_A "\n",
			 names[i]);
		expect_bad(parse(line), 2, names[i]);
	}
}

Test(keyfile, name_too_long)
{
	expect_bad(parse("# 32 chars\n" NAME31 "5 " HEX_A "\n"), 2, "32");
	expect_bad(parse(NAME31 NAME31 " " HEX_A "\n"), 1, "62");
}

Test(keyfile, name_or_key_missing)
{
	expect_bad(parse("alice\n"), 1, "no key");
	expect_bad(parse("alice   \n"), 1, "no key, blanks");
	expect_bad(parse(HEX_A "\n"), 1, "no name");
	expect_bad(parse("  " HEX_A "\n"), 1, "no name, indented");
	/* a name glued to its key reads as one long name */
	expect_bad(parse("alice" HEX_A "\n"), 1, "no blank");
}

Test(keyfile, hex_wrong_length)
{
	char line[200];

	/* 63, 62, 65 and 66 digits, and 2 */
	snprintf(line, sizeof(line), "a %.63s\n", HEX_A);
	expect_bad(parse(line), 1, "63");
	snprintf(line, sizeof(line), "a %.62s\n", HEX_A);
	expect_bad(parse(line), 1, "62");
	expect_bad(parse("a " HEX_A "0\n"), 1, "65");
	expect_bad(parse("a " HEX_A "00\n"), 1, "66");
	expect_bad(parse("a 00\n"), 1, "2");
	/* 63 digits as the last bytes of the text: no read past them */
	snprintf(line, sizeof(line), "a %.63s", HEX_A);
	expect_bad(parse(line), 1, "63 at the end");
}

Test(keyfile, hex_not_hex)
{
	static const char bads[] = "gGxX -+\t:.z\xff";
	char line[120];

	for (size_t pos = 0; pos < 2 * MSGA_KEY_LEN; pos += 7) {
		for (size_t j = 0; j < sizeof(bads) - 1; j++) {
			snprintf(line, sizeof(line), "a %s\n", HEX_A);
			line[2 + pos] = bads[j];
			expect_bad(parse(line), 1, line);
		}
	}
	/* the last digit too */
	snprintf(line, sizeof(line), "a %s\n", HEX_A);
	line[2 + 63] = 'g';
	expect_bad(parse(line), 1, "last");
	/* no "0x" */
	expect_bad(parse("a 0x" HEX_A "\n"), 1, "0x");
}

Test(keyfile, trailing_garbage)
{
	expect_bad(parse("a " HEX_A " x\n"), 1, "word");
	expect_bad(parse("a " HEX_A " # comment\n"), 1, "comment");
	expect_bad(parse("a " HEX_A "#\n"), 1, "glued #");
	expect_bad(parse("a " HEX_A " " HEX_B "\n"), 1, "two keys");
	expect_bad(parse("a " HEX_A "\v\n"), 1, "vertical tab");
}

Test(keyfile, duplicate_name)
{
	expect_bad(parse("alice " HEX_A "\n"
			 "# bob next\n"
			 "bob " HEX_B "\n"
			 "alice " HEX_B "\n"), 4, "alice twice");
	/* names are case-sensitive */
	cr_expect_eq(parse("alice " HEX_A "\nAlice " HEX_B "\n"), 2);
	/* the same key under two names is keyring.c's to refuse */
	cr_expect_eq(parse("alice " HEX_A "\nbob " HEX_A "\n"), 2);
}

Test(keyfile, embedded_nul)
{
	static const char text[] = "ok " HEX_B "\n"
				   "al\0ce " HEX_A "\n";
	static const char at_start[] = "\0a " HEX_A "\n";
	static const char in_key[] = "a 00\0" "102030405060708090a0b0c0d0e0f"
				     "101112131415161718191a1b1c1d1e1f\n";
	static const char after_key[] = "a " HEX_A "\0\n";

	expect_bad(parse_n(text, sizeof(text) - 1, MSGA_KEYS_MAX), 2,
		   "in name");
	expect_bad(parse_n(at_start, sizeof(at_start) - 1, MSGA_KEYS_MAX),
		   1, "at start");
	expect_bad(parse_n(in_key, sizeof(in_key) - 1, MSGA_KEYS_MAX), 1,
		   "in key");
	expect_bad(parse_n(after_key, sizeof(after_key) - 1, MSGA_KEYS_MAX),
		   1, "after key");
}

Test(keyfile, more_than_max)
{
	static const char text[] = "a " HEX_A "\n"
				   "\n"
				   "b " HEX_B "\n"
				   "c " HEX_A "\n";

	expect_bad(parse_n(text, sizeof(text) - 1, 2), 4, "3 of 2");
	expect_bad(parse_n(text, sizeof(text) - 1, 1), 3, "2 of 1");
	expect_bad(parse_n(text, sizeof(text) - 1, 0), 1, "1 of 0");
	cr_expect_eq(parse_n(text, sizeof(text) - 1, 3), 3);
}

Test(keyfile, max_keys_of_a_file)
{
	size_t cap = (MSGA_KEYS_MAX + 1) * 80, n = 0;
	char *text = malloc(cap);

	cr_assert_not_null(text);
	for (unsigned int i = 0; i < MSGA_KEYS_MAX; i++)
		n += (size_t)snprintf(text + n, cap - n, "k%u %s\n", i, HEX_A);
	cr_expect_eq(parse_n(text, n, MSGA_KEYS_MAX), (int)MSGA_KEYS_MAX);
	cr_expect_str_eq(ents[MSGA_KEYS_MAX - 1].name, "k255");
	n += (size_t)snprintf(text + n, cap - n, "one.more %s\n", HEX_B);
	expect_bad(parse_n(text, n, MSGA_KEYS_MAX), MSGA_KEYS_MAX + 1,
		   "257th");
	free(text);
}

Test(keyfile, no_key_at_all)
{
	expect_bad(parse_n("", 0, MSGA_KEYS_MAX), 0, "empty");
	expect_bad(parse("\n"), 0, "one newline");
	expect_bad(parse("# nothing here\n\n  # nor here\r\n\t\n"), 0,
		   "comments and blanks");
	expect_bad(parse("#" HEX_A), 0, "a commented-out key");
}

Test(keyfile, line_numbers_count_every_line)
{
	/* blank, CRLF, comment and last-without-newline lines all count */
	expect_bad(parse("\n\r\n# c\n\t\na " HEX_A "\r\n\nb"), 7, "7");
	expect_bad(parse("a " HEX_A "\n\n\n\n\n\n\n\n\nb !\n"), 10, "10");
}

Test(keyfile, length_is_respected)
{
	static const char text[] = "a " HEX_A "\nb " HEX_B "\n";
	size_t first = strlen("a " HEX_A);

	/* The text stops where n says, even inside a line. */
	cr_expect_eq(parse_n(text, first, MSGA_KEYS_MAX), 1);
	cr_expect_eq(parse_n(text, first + 1, MSGA_KEYS_MAX), 1);
	expect_bad(parse_n(text, first - 1, MSGA_KEYS_MAX), 1, "cut key");
	expect_bad(parse_n(text, first + 3, MSGA_KEYS_MAX), 2, "cut 2nd");
	expect_bad(parse_n(text, 1, MSGA_KEYS_MAX), 1, "name only");
}

Test(key_name, check)
{
	static const char *const good[] = {
		"a", "default", "Az09._@-", "user@host.example", NAME31,
		"0", "-", "@",
	};
	static const char *const bads[] = {
		"", NAME31 "5", "a b", "a\tb", "a/b", "a:b", "a#b", "\xc3\xa9",
		"a\n", "a*", " a", "a ",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_expect_eq(msga__key_name_check(good[i]), 0, "'%s'",
			     good[i]);
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
		cr_expect_eq(msga__key_name_check(bads[i]), -EINVAL, "'%s'",
			     bads[i]);
	cr_expect_eq(msga__key_name_check(NULL), -EINVAL);
}

Test(key_name, same_rule_as_the_file)
{
	char line[128];

	/* every byte value: a one-char name passes both or neither */
	for (int c = 1; c < 256; c++) {
		char name[2] = { (char)c, 0 };
		int ok = !msga__key_name_check(name);

		if (c == '#' || c == ' ' || c == '\t' || c == '\r' ||
		    c == '\n')
			continue; /* a comment, a blank or a newline there */
		snprintf(line, sizeof(line), "%s %s\n", name, HEX_A);
		cr_expect_eq(parse(line) == 1, ok, "char 0x%02x", c);
	}
}

/* An allow list entry (msga_pub_attr.allow): "IDENTITY PATTERN". */
Test(allow_entry, identity_space_pattern)
{
	cr_expect_eq(msga__allow_entry_check("alice prices.*"), 0);
	cr_expect_eq(msga__allow_entry_check("* prices.eu"), 0);
	cr_expect_eq(msga__allow_entry_check(NAME31 " *"), 0);
}

Test(allow_entry, refused)
{
	cr_expect_eq(msga__allow_entry_check(NULL), -EINVAL);
	cr_expect_eq(msga__allow_entry_check("alice"), -EINVAL);
	cr_expect_eq(msga__allow_entry_check(" prices"), -EINVAL);
	cr_expect_eq(msga__allow_entry_check(NAME31 "x prices"), -EINVAL);
	cr_expect_eq(msga__allow_entry_check("a/b prices"), -EINVAL);
	cr_expect_eq(msga__allow_entry_check("alice "), -EINVAL);
}
