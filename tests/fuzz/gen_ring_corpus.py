#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of fuzz_ring.c into tests/fuzz/corpus/ring.

Each seed is a program of fuzz_ring.c's operations (opcode % 6):
0 record(plen u16, kind u8: bit 6 TOPIC, bit 5 LAST_VALUE, bit 7 a
first fragment, bits 0-1 the topic; land u16), 1 write now(off u24, len u8,
bytes), 2 write between loads(off, len, bytes, countdown u8), 3 poll(flags
u8: 1 fast reader, 2 hold), 4 release(index u16), 5 report(how u8; bit 7:
a hostile subscriber's report, freed u32 follows).
Run from the top of the tree: python3 tests/fuzz/gen_ring_corpus.py
"""
import os
import struct

OUT = os.path.join(os.path.dirname(__file__), "corpus", "ring")


def rec(plen, kind=0, land=0):
    return bytes([0]) + struct.pack(">HBH", plen, kind, land)


def poll(flags=0):
    return bytes([3, flags])


def release(i=0):
    return bytes([4]) + struct.pack(">H", i)


def report(freed=None):
    if freed is None:
        return bytes([5, 0])
    return bytes([5, 0x80]) + struct.pack(">I", freed)


def write(off, data, later=None):
    b = bytes([1 if later is None else 2]) + struct.pack(">I", off)[1:]
    b += bytes([len(data)]) + data
    return b + (bytes([later]) if later is not None else b"")


def forge(at, record):
    """A record at ring offset at, in one WRITE from 4 bytes before it
    (whose first byte 0xa5 asks the harness for the awaited stamp, which
    it puts over the WRITE's last 8 bytes: the record's trailer)."""
    return write(at - 4, b"\xa5\x00\x00\x00" + record + bytes(8))


def long_head(rtype, flags, word=0, seq=7, topic=2):
    return struct.pack("<IQHBBI", word, seq, topic, rtype, flags, 0)


# After rec(40, land=1) (a topic's first message: long head) and a poll,
# the reader waits at ring offset 80.
FIRST = rec(40, land=1) + poll()

seeds = {
    # a topic's first message (long head), then short ones, fast reader
    "steady": b"".join([rec(40), poll()] + [rec(n % 300) + poll(1)
                                             for n in range(60)] + [report()]),
    # hold some, release out of order, around many laps
    "holds": b"".join([rec(8), poll(2)] + [rec(n * 37 % 700, land=0)
                                           + poll(3 if n % 5 == 0 else 1)
                                           + (release(n) if n % 7 == 0
                                              else b"") + report()
                                           for n in range(400)]),
    # fragments and topic names, half landed then landed
    "partial": b"".join([rec(100, 0x80, 3), poll(), rec(100, 0x80, 0),
                         poll(), rec(20, 0x40), poll(), rec(4), poll(1)]),
    # a hostile rewrite of a held record's head, then a stale PAD word
    "hostile": b"".join([rec(40), poll(2), rec(40), poll(3),
                         write(0, b"\xff\xff\xff\x00"),
                         write(48, b"\x40\x00\x00\x80"), rec(3), poll(),
                         write(96, b"\x40\x00\x00\x80", later=1), poll(1),
                         release(0), report(), release(0)]),
    # a forged record with the awaited stamp, via a write between loads
    "forged": b"".join([write(0, b"\xa5" + bytes(7) + bytes(8), later=2),
                        poll(), poll(1)]),
    # forged records the reader must refuse: a CREDIT (the publisher
    # writes none into a ring), a fragment without its extension, a short
    # record of a topic never introduced by a long one
    "forged-credit": FIRST + forge(80, long_head(4, 0)) + poll(),
    "forged-noext": FIRST + forge(80, long_head(1, 1)) + poll(),
    "forged-short": FIRST + forge(80, struct.pack("<I", 0x40000000 | 5 << 13))
    + poll(),
    # (0.12) a topic's last value after its name, held, then its live
    # data; then a last value after live data, a replay: the reader kills
    # the connection
    "last-value": b"".join([rec(9, 0x40, 1), poll(), rec(40, 0x20, 1),
                            poll(2), rec(40, 0, 1), poll(1), release(0),
                            report()]),
    "last-value-late": b"".join([rec(9, 0x41, 1), poll(), rec(24, 1, 1),
                                 poll(), rec(40, 0x21, 1), poll(),
                                 rec(8, 1, 1), poll()]),
    # a subscriber reports what it read, then more than was ever written
    "overclaim": b"".join([rec(200), poll(), rec(200), report(256),
                           report(0xFFFFFFF0)]),
}

os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
