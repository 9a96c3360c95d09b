"""The keys, channels and values the generated streams use, and Redis Cluster's key → slot rule.

The key pool is small on purpose: commands hit the same keys often, so values build up and
later commands read what earlier ones wrote. Keys are named by the type they usually hold
(`s` strings, `h` hash, `l` lists, `t` sets, `z` sorted set, `x` stream) under a few hash
tags, so that multi-key commands have both same-slot and cross-slot choices. The tags a..d
land on four different shards of an evenly split 4-shard proxy (slots 15495, 3300, 7365,
11298); two untagged keys add slots of their own.
"""

TAGS = [b"a", b"b", b"c", b"d"]
NAMES = {
    "string": [b"s1", b"s2"],
    "hash": [b"h"],
    "list": [b"l1", b"l2"],
    "set": [b"t1", b"t2"],
    "zset": [b"z"],
    "stream": [b"x"],
}
UNTAGGED = [b"s1", b"l1"]


def tagged(tag, name):
    return b"{" + tag + b"}" + name


POOL = [tagged(tag, name) for tag in TAGS for names in NAMES.values() for name in names]
POOL += UNTAGGED

# Keys that only the "wake a blocked client" steps use: always empty outside those steps, so a
# blocking command on them really blocks until the other connection pushes.
WAKE_LIST = {tag: tagged(tag, b"wl") for tag in TAGS}
WAKE_ZSET = {tag: tagged(tag, b"wz") for tag in TAGS}
WAKE_STREAM = {tag: tagged(tag, b"wx") for tag in TAGS}
WAKE_KEYS = list(WAKE_LIST.values()) + list(WAKE_ZSET.values()) + list(WAKE_STREAM.values())

ALL_KEYS = POOL + WAKE_KEYS

CHANNELS = [b"ch1", b"ch2", b"news.1", b"{a}ch"]
PATTERNS = [b"ch*", b"news.?", b"*"]

VALUES = [b"0", b"1", b"42", b"-7", b"3.5", b"hello", b"", b"xyz", b"10000000000", b"a b"]
BINARY_VALUES = [b"a\r\nb", b"\x00\x01\xff", b"*1\r\n$1\r\nx\r\n", b"-ERR not an error\r\n"]
SET_MEMBERS = [b"%d" % i for i in range(1, 13)] + [b"m1", b"m2", b"m3"]
FIELDS = [b"f1", b"f2", b"f3", b"f4"]
ZMEMBERS = [b"m1", b"m2", b"m3", b"m4", b"m5"]


def crc16(data):
    """CRC16-XMODEM, as Redis Cluster hashes keys."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key):
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1:end]
    return crc16(key) % 16384


def same_slot(keys):
    return len({key_slot(k) for k in keys}) <= 1
