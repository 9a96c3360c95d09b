"""Seeded random command streams for the differential test.

A Generator turns a seed into a sequence of Units: one connection's command (one-at-a-time
mode) or one connection's batch of commands (pipelined mode). It keeps a small model of each
connection (in MULTI and on which hash tag, watching, subscribed to what, which protocol) so
that the stream stays meaningful: transactions use keys of one hash tag, a subscribed RESP2
connection sends only what RESP2 allows there (plus a forbidden command now and then, whose
error is compared too), and cross-slot requests are generated only where a refusal by the proxy
cannot make the two keyspaces drift apart unnoticed (see `cross_slot_ok`).

A RESP3 stream (protocol=3; the runner opens its connections with HELLO 3) also sends HELLO
itself (HELLO 2 / 3 / no version, SETNAME, bad versions), follows a RESET (which goes back to
RESP2) with HELLO 3 on the next command mostly, and lets a subscribed RESP3 connection send
ordinary commands too (redis-server 7 allows any command there), PUBLISH to its own channels
included. A RESP2 stream draws exactly the random numbers it drew before RESP3 existed.

Everything random comes from random.Random(seed); the same seed, mode and protocol give the
same stream.
"""

import hashlib
import random
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

import keyspace as ks

# Command forms that show a proxy bug found by this test (see docs/testing.md). They are not
# generated unless --known-bugs is given, so that the fixed seeds pass until the bug is fixed;
# remove an entry once its fix has landed.
KNOWN_BUGS = {}
# Not generated on purpose: SUBSCRIBE and its kin inside MULTI. The proxy refuses them (README,
# Transactions); redis-server queues them and its EXEC reply misaligns the replies after it, so
# the two sides could not be compared past it.

# Scripts the stream runs. Their SHA1s are what EVALSHA and SCRIPT EXISTS use.
SCRIPT_GET = b"return redis.call('get', KEYS[1])"
SCRIPT_SET = b"return redis.call('set', KEYS[1], ARGV[1])"
SCRIPT_INCR = b"return redis.call('incr', KEYS[1])"
SCRIPT_PAIR = b"redis.call('set', KEYS[1], ARGV[1]); return redis.call('mget', KEYS[1], KEYS[2])"
SCRIPT_PCALL = b"return redis.pcall('lpush', KEYS[1], 'x')"
SCRIPT_TYPE_ERROR = b"return redis.call('hget', KEYS[1], 'f1')"
SCRIPTS = [SCRIPT_GET, SCRIPT_SET, SCRIPT_INCR, SCRIPT_PAIR, SCRIPT_PCALL, SCRIPT_TYPE_ERROR]
# RESP3 streams only: scripts whose replies carry RESP3 types (map, double, boolean, big number,
# verbatim string) to a RESP3 client; redis.setresp(3) gives redis.call's RESP3 replies to Lua.
# (kind of key, script, ARGV choices)
RESP3_SCRIPTS = [
    ("hash", b"redis.setresp(3); return redis.call('hgetall', KEYS[1])", [[]]),
    ("zset", b"redis.setresp(3); return redis.call('zscore', KEYS[1], ARGV[1])",
     [[b"m1"], [b"m2"]]),
    ("string", b"redis.setresp(3); return redis.call('exists', KEYS[1]) == 1", [[]]),
    ("stream", b"redis.setresp(3); return redis.call('xread', 'count', '2', 'streams', KEYS[1], "
               b"'0')", [[]]),
    ("string", b"return {big_number=ARGV[1]}",
     [[b"123456789012345678901234567890"], [b"-98765432109876543210"]]),
    ("string", b"return {verbatim_string={format='txt', string=ARGV[1]}}", [[b"hi"], [b"a\r\nb"]]),
    ("string", b"return {double=tonumber(ARGV[1])}", [[b"3.5"], [b"-0.25"], [b"1e300"]]),
    ("string", b"return {map={a={1, 'x'}}}", [[]]),
]
LIBRARY = (b"#!lua name=difflib\n"
           b"redis.register_function('dget', function(keys, args) "
           b"return redis.call('get', keys[1]) end)\n"
           b"redis.register_function{function_name='dlen', callback=function(keys, args) "
           b"return redis.call('strlen', keys[1]) end, flags={'no-writes'}}\n")

# Far in the future (2100-01-01), so that keys never expire during a run.
FAR_UNIX_TIME = b"4102444800"
BIG_SECONDS = [b"1000", b"50000", b"900000"]
BIG_MILLIS = [b"5000000", b"90000000"]
BLOCK_SHORT = b"0.01"    # seconds; a blocking command on an empty key times out at once
BLOCK_WAKE = b"10"       # seconds; a blocked command that another connection will wake


def sha1(script):
    return hashlib.sha1(script).hexdigest().encode()


def show(arg):
    """One argument as a shell-like word, quoted when it must be."""
    text = arg.decode("latin-1")
    if text and all(33 <= ord(c) < 127 and c not in "\"'\\" for c in text):
        return text
    return '"' + text.encode("unicode_escape").decode().replace('"', '\\"') + '"'


@dataclass
class Cmd:
    argv: list                      # the request, a list of bytes
    keys: list = field(default_factory=list)   # the keys it touches (slot checks, resync)
    # A "wake" step: this command blocks on `conns[conn]`, then connection `wake_conn` sends
    # `waker`, which must wake it. Only in one-at-a-time mode.
    wake_conn: int = -1
    waker: "Cmd" = None

    @property
    def name(self):
        return self.argv[0].upper() if self.argv else b""

    def text(self):
        return " ".join(show(a) for a in self.argv)


@dataclass
class Unit:
    conn: int                       # which of the target's connections sends it
    cmds: list                      # one Cmd, or a pipelined batch


@dataclass
class ConnModel:
    """What the generator assumes about one connection (it assumes its commands succeed)."""
    multi: bool = False
    tag: bytes = None               # the hash tag a transaction (or its WATCH) is pinned to
    watching: bool = False
    tx_len: int = 0
    channels: set = field(default_factory=set)
    patterns: set = field(default_factory=set)
    proto: int = 2                  # RESET goes back to RESP2, HELLO switches

    @property
    def subscribed(self):
        return bool(self.channels or self.patterns)


class Generator:
    """Units for one seed. mode: 'single' (one at a time), 'pipeline', or 'kill' (one at a
    time while a shard is killed and restarted); protocol: 2 or 3, the one the runner opens
    every connection in."""

    def __init__(self, seed, mode, conns, known_bugs=(), protocol=2):
        self.rng = random.Random(seed)
        self.mode = mode
        self.protocol = protocol
        self.models = [ConnModel(proto=protocol) for _ in range(conns)]
        self.known_bugs = set(known_bugs)    # names from KNOWN_BUGS to generate anyway
        self.downtime = False       # kill mode: a shard is down (set by the runner)
        self.stream_seq = 0         # ids for XADD on the wake streams, always increasing
        self.forced_tag = None      # while generating for a transaction: its tag
        self.library_loaded = False
        self.own_publish = False    # this batch has a PUBLISH by a subscribed (RESP3) connection
        self.switched = False       # the last command switched its connection's protocol
        self.scripts_loaded = set()      # by SCRIPT LOAD: on every shard
        self.scripts_evaluated = set()   # by EVAL: on some shards only
        self.commands = self._catalogue()

    # ---- the stream ----

    def units(self, count):
        """Yield Units until `count` commands have been generated."""
        made = 0
        while made < count:
            conn = self.rng.randrange(len(self.models))
            if self.mode == "pipeline":
                self.own_publish = False
                batch = []
                for _ in range(self.rng.randint(1, 12)):
                    batch.append(self.command(conn))
                    if self.switched and not self.known("pipelined_protocol_switch"):
                        break           # the batch ends with the switch
                made += len(batch)
                yield Unit(conn, batch)
                continue
            cmd = None
            if self.rng.random() < 0.025:
                cmd = self._wake(conn)
            if cmd is None:
                cmd = self.command(conn)
            made += 1
            yield Unit(conn, [cmd])

    def reset_conn(self, conn):
        """The runner replaced this connection with a fresh one (kill mode)."""
        self.models[conn] = ConnModel(proto=self.protocol)

    def command(self, conn):
        subscribed = self.models[conn].subscribed
        proto = self.models[conn].proto
        cmd = self._command(conn)
        self.switched = self.models[conn].proto != proto    # HELLO or RESET changed it
        if self.mode == "pipeline" and subscribed and cmd.name == b"PUBLISH":
            self.own_publish = True     # (only a RESP3 subscriber sends PUBLISH)
        return cmd

    def _command(self, conn):
        m = self.models[conn]
        # (Every new random draw is behind `self.protocol == 3`, so RESP2 streams stay as
        # they were.)
        if self.protocol == 3 and m.proto != 3 and not m.multi and not m.subscribed and \
                self.rng.random() < 0.8:
            m.proto = 3                 # back to RESP3 after a RESET or a HELLO 2
            return Cmd([b"HELLO", b"3"])
        if m.subscribed and (m.proto != 3 or not m.multi and self.rng.random() < 0.35):
            return self._subscribed_command(conn, m)
        if m.multi:
            return self._tx_command(conn, m)
        weights, makers = self.commands
        while True:
            maker = self.rng.choices(makers, weights)[0]
            cmd = maker(conn, m)
            if cmd is not None:
                return cmd

    def known(self, bug):
        """Whether the command forms of this known proxy bug are generated (--known-bugs)."""
        return bug in self.known_bugs or bug not in KNOWN_BUGS  # fixed ones: always

    # ---- choosing keys ----

    def pick(self, seq):
        return self.rng.choice(seq)

    def tag(self):
        return self.forced_tag or self.pick(ks.TAGS)

    def key(self, kind, tag=None):
        """Mostly a key of that type's names; sometimes any key (for WRONGTYPE replies)."""
        tag = tag or self.tag()
        r = self.rng.random()
        if r < 0.12:
            return ks.tagged(tag, self.pick([n for names in ks.NAMES.values() for n in names]))
        if r < 0.18 and self.forced_tag is None:
            return self.pick(ks.UNTAGGED)
        return ks.tagged(tag, self.pick(ks.NAMES[kind]))

    def keys_for(self, kind, count, write):
        """`count` keys for a multi-key command that is not split: one slot, or (rarely, and
        only where cross_slot_ok) several."""
        tag = self.tag()
        keys = [self.key(kind, tag) for _ in range(count)]
        if not ks.same_slot(keys):      # an untagged key came up: keep to one slot
            keys = [ks.tagged(tag, self.pick(ks.NAMES[kind])) for _ in range(count)]
        if self.rng.random() < 0.08 and self.cross_slot_ok(write):
            keys[-1] = self.key(kind, self.pick([t for t in ks.TAGS if t != tag]))
        return keys

    def split_keys(self, kind, count):
        """Keys for MGET/MSET/DEL/EXISTS/TOUCH/UNLINK, which the proxy splits over shards."""
        if self.forced_tag is not None or self.rng.random() < 0.3:
            tag = self.tag()
            return [self.key(kind, tag) for _ in range(count)]
        return [self.key(kind) for _ in range(count)]

    def cross_slot_ok(self, write):
        """Whether a request whose keys span slots may be generated now.

        The proxy refuses it (-CROSSSLOT, allow-listed) where redis-server executes it. A read
        changes nothing. A write makes the reference differ from the proxy's shards, so the
        runner copies the keys involved from the reference to the proxy right after (DUMP/
        RESTORE). That is only sound one command at a time (in a pipeline the next commands
        are already on their way) and with no connection WATCHing (the copy would touch
        watched keys on the proxy's side only); the fault mode keeps it out altogether.
        """
        if self.forced_tag is not None:
            return False
        if not write:
            return True
        return self.mode == "single" and not any(m.watching for m in self.models)

    def value(self):
        return self.pick(ks.VALUES)

    def raw_value(self):
        """A value for strings, lists, streams and messages: sometimes binary (CR LF, NUL)
        or large (tens of kilobytes, read by the proxy in several pieces). Hashes and sets
        keep to value(): a large value would turn a small hash into a hash table, whose
        field order differs between processes."""
        r = self.rng.random()
        if r < 0.02:
            return self.pick([b"L", b"M"]) * self.pick([20000, 70000])
        if r < 0.06:
            return self.pick(ks.BINARY_VALUES)
        return self.value()

    # ---- the catalogue: (weight, maker) ----

    def _catalogue(self):
        table = [
            (14, self._string), (6, self._multikey_split), (6, self._hash), (8, self._list),
            (6, self._set), (6, self._zset), (5, self._stream), (5, self._generic),
            (3, self._script), (2, self._pubsub), (3, self._transaction), (2, self._blocking),
            (2, self._connection), (3, self._error), (0.6, self._unsupported),
            (0.15, self._flushall), (0.5, self._known_bug),
        ]
        if self.protocol == 3:
            table += [(0.8, self._hello), (1.0, self._resp3_script)]
        return [w for w, _ in table], [f for _, f in table]

    def _string(self, conn, m):
        k = self.key("string")
        r = self.rng.randrange(17)
        if r == 0:
            argv = [b"SET", k, self.raw_value()]
            opts = self.rng.sample([[b"EX", self.pick(BIG_SECONDS)], [b"PX", self.pick(BIG_MILLIS)],
                                    [b"KEEPTTL"], [b"NX"], [b"XX"], [b"GET"],
                                    [b"EXAT", FAR_UNIX_TIME]], self.rng.randint(0, 2))
            for opt in opts:
                argv += opt
            return Cmd(argv, [k])
        if r == 1:
            return Cmd([b"GET", k], [k])
        if r == 2:
            return Cmd([b"APPEND", k, self.raw_value()], [k])
        if r == 3:
            return Cmd([self.pick([b"INCR", b"DECR"]), k], [k])
        if r == 4:
            return Cmd([self.pick([b"INCRBY", b"DECRBY"]), k,
                        self.pick([b"1", b"5", b"-3", b"x", b"9223372036854775807"])], [k])
        if r == 5:
            return Cmd([b"INCRBYFLOAT", k, self.pick([b"1.5", b"-0.25", b"1e3", b"abc"])], [k])
        if r == 6:
            return Cmd([b"GETRANGE", k, self.pick([b"0", b"2", b"-3"]),
                        self.pick([b"-1", b"3", b"100"])], [k])
        if r == 7:
            return Cmd([b"SETRANGE", k, self.pick([b"0", b"3", b"12", b"-1"]), self.value()], [k])
        if r == 8:
            return Cmd([b"STRLEN", k], [k])
        if r == 9:
            return Cmd([b"GETDEL", k], [k])
        if r == 10:
            return Cmd([b"GETSET", k, self.raw_value()], [k])
        if r == 11:
            return Cmd([b"SETNX", k, self.raw_value()], [k])
        if r == 12:
            opt = self.pick([[b"EX", self.pick(BIG_SECONDS)], [b"PERSIST"], [],
                             [b"PXAT", FAR_UNIX_TIME + b"000"]])
            return Cmd([b"GETEX", k] + opt, [k])
        if r == 13:
            keys = self.keys_for("string", 2, write=True)
            argv = [b"MSETNX"]
            for key in keys:
                argv += [key, self.value()]
            return Cmd(argv, keys)
        if r == 14:
            keys = self.keys_for("string", 2, write=False)
            return Cmd([b"LCS"] + keys + self.pick([[], [b"LEN"]]), keys)
        if r == 15:
            return Cmd([b"SETEX", k, self.pick(BIG_SECONDS + [b"0", b"-5"]), self.raw_value()], [k])
        return Cmd([b"SUBSTR", k, b"0", b"2"], [k])

    def _multikey_split(self, conn, m):
        r = self.rng.randrange(6)
        keys = self.split_keys("string", self.rng.randint(1, 5))
        if r == 0:
            argv = [b"MSET"]
            for key in keys:
                argv += [key, self.raw_value()]
            return Cmd(argv, keys)
        name = [b"MGET", b"DEL", b"EXISTS", b"TOUCH", b"UNLINK", b"MGET"][r]
        if name != b"MGET":
            keys = self.split_keys(self.pick(list(ks.NAMES)), len(keys))
        return Cmd([name] + keys, keys)

    def _hash(self, conn, m):
        k = self.key("hash")
        f = self.pick(ks.FIELDS)
        r = self.rng.randrange(13)
        if r in (0, 1):
            argv = [self.pick([b"HSET", b"HMSET"]), k]
            for field_name in self.rng.sample(ks.FIELDS, self.rng.randint(1, 3)):
                argv += [field_name, self.value()]
            return Cmd(argv, [k])
        simple = {2: b"HGET", 3: b"HDEL", 4: b"HEXISTS", 5: b"HSTRLEN"}
        if r in simple:
            return Cmd([simple[r], k, f], [k])
        if r == 6:
            return Cmd([b"HMGET", k] + self.rng.sample(ks.FIELDS, 2), [k])
        if r == 7:
            return Cmd([b"HINCRBY", k, f, self.pick([b"1", b"-2", b"x"])], [k])
        if r == 8:
            return Cmd([b"HINCRBYFLOAT", k, f, self.pick([b"0.5", b"2"])], [k])
        if r == 9:
            return Cmd([b"HSETNX", k, f, self.value()], [k])
        return Cmd([self.pick([b"HLEN", b"HGETALL", b"HKEYS", b"HVALS"]), k], [k])

    def _list(self, conn, m):
        k = self.key("list")
        r = self.rng.randrange(18)
        if r in (0, 1):
            return Cmd([self.pick([b"LPUSH", b"RPUSH"]), k] +
                       [self.raw_value() for _ in range(self.rng.randint(1, 3))], [k])
        if r == 2:
            return Cmd([self.pick([b"LPOP", b"RPOP"]), k] + self.pick([[], [b"2"], [b"0"]]), [k])
        if r == 3:
            return Cmd([b"LRANGE", k, self.pick([b"0", b"1", b"-2"]), self.pick([b"-1", b"2"])],
                       [k])
        if r == 4:
            return Cmd([self.pick([b"LLEN", b"LINDEX"]), k] + ([] if self.rng.random() < 0.5
                                                              else [b"1"]), [k])
        if r == 5:
            return Cmd([b"LSET", k, self.pick([b"0", b"5", b"-1"]), self.value()], [k])
        if r == 6:
            return Cmd([b"LINSERT", k, self.pick([b"BEFORE", b"AFTER"]), self.value(),
                        self.value()], [k])
        if r == 7:
            return Cmd([b"LREM", k, self.pick([b"0", b"1", b"-1"]), self.value()], [k])
        if r == 8:
            return Cmd([b"LTRIM", k, b"0", self.pick([b"3", b"6"])], [k])
        if r == 9:
            return Cmd([b"LPOS", k, self.value()] + self.pick([[], [b"RANK", b"-1"],
                                                               [b"COUNT", b"0"], [b"RANK", b"0"]]),
                       [k])
        if r == 10:
            keys = self.keys_for("list", 2, write=True)
            return Cmd([b"LMOVE"] + keys + [self.pick([b"LEFT", b"RIGHT"]),
                                            self.pick([b"LEFT", b"RIGHT"])], keys)
        if r == 11:
            keys = self.keys_for("list", 2, write=True)
            return Cmd([b"RPOPLPUSH"] + keys, keys)
        if r == 12:
            return Cmd([self.pick([b"LPUSHX", b"RPUSHX"]), k, self.value()], [k])
        if r == 13:
            keys = self.keys_for("list", 2, write=True)
            return Cmd([b"LMPOP", b"2"] + keys + [self.pick([b"LEFT", b"RIGHT"]), b"COUNT", b"2"],
                       keys)
        if r == 14:
            return Cmd([b"SORT", k] + self.pick([[], [b"ALPHA"], [b"DESC", b"LIMIT", b"0", b"2"],
                                                 [b"ALPHA", b"DESC"]]), [k])
        if r == 15:
            keys = self.keys_for("list", 2, write=True)
            return Cmd([b"SORT", keys[0], b"ALPHA", b"STORE", keys[1]], keys)
        return self._blocking(conn, m)

    def _set(self, conn, m):
        k = self.key("set")
        r = self.rng.randrange(11)
        if r in (0, 1):
            return Cmd([b"SADD", k] + self.rng.sample(ks.SET_MEMBERS, self.rng.randint(1, 4)), [k])
        if r == 2:
            return Cmd([b"SREM", k] + self.rng.sample(ks.SET_MEMBERS, 2), [k])
        if r == 3:
            return Cmd([self.pick([b"SISMEMBER", b"SMISMEMBER"]), k, self.pick(ks.SET_MEMBERS)],
                       [k])
        if r == 4:
            return Cmd([self.pick([b"SCARD", b"SMEMBERS"]), k], [k])
        if r == 5:
            keys = self.keys_for("set", self.rng.randint(1, 3), write=False)
            return Cmd([self.pick([b"SINTER", b"SUNION", b"SDIFF"])] + keys, keys)
        if r == 6:
            keys = self.keys_for("set", 3, write=True)
            return Cmd([self.pick([b"SINTERSTORE", b"SUNIONSTORE", b"SDIFFSTORE"])] + keys, keys)
        if r == 7:
            keys = self.keys_for("set", 2, write=True)
            return Cmd([b"SMOVE"] + keys + [self.pick(ks.SET_MEMBERS)], keys)
        if r == 8:
            keys = self.keys_for("set", 2, write=False)
            return Cmd([b"SINTERCARD", b"2"] + keys + self.pick([[], [b"LIMIT", b"1"]]), keys)
        if r == 9:
            return Cmd([b"SMEMBERS", k], [k])
        return Cmd([b"OBJECT", b"ENCODING", k], [k])

    def _zset(self, conn, m):
        k = self.key("zset")
        r = self.rng.randrange(16)
        if r in (0, 1, 2):
            argv = [b"ZADD", k]
            for opt in self.rng.sample([b"NX", b"XX", b"GT", b"LT", b"CH", b"INCR"],
                                       self.rng.choice([0, 0, 1, 2])):
                argv.append(opt)
            for member in self.rng.sample(ks.ZMEMBERS, self.rng.randint(1, 3)):
                argv += [self.pick([b"1", b"2", b"2.5", b"-1", b"10", b"inf"]), member]
            return Cmd(argv, [k])
        if r == 3:
            return Cmd([b"ZINCRBY", k, self.pick([b"1", b"-0.5"]), self.pick(ks.ZMEMBERS)], [k])
        if r == 4:
            return Cmd([b"ZREM", k, self.pick(ks.ZMEMBERS)], [k])
        if r == 5:
            return Cmd([self.pick([b"ZSCORE", b"ZRANK", b"ZREVRANK"]), k, self.pick(ks.ZMEMBERS)],
                       [k])
        if r == 6:
            return Cmd([b"ZMSCORE", k] + self.rng.sample(ks.ZMEMBERS, 2), [k])
        if r == 7:
            return Cmd([b"ZRANGE", k, b"0", b"-1"] + self.pick([[], [b"WITHSCORES"]]), [k])
        if r == 8:
            return Cmd([b"ZRANGE", k, b"(1", b"10", b"BYSCORE", b"LIMIT", b"0", b"2"], [k])
        if r == 9:
            return Cmd([b"ZCARD", k], [k])
        if r == 10:
            return Cmd([b"ZCOUNT", k, b"-inf", self.pick([b"2", b"(2", b"+inf"])], [k])
        if r == 11:
            return Cmd([self.pick([b"ZPOPMIN", b"ZPOPMAX"]), k] + self.pick([[], [b"2"]]), [k])
        if r == 12:
            keys = self.keys_for("zset", 3, write=True)
            return Cmd([self.pick([b"ZUNIONSTORE", b"ZINTERSTORE"]), keys[0], b"2"] + keys[1:] +
                       self.pick([[], [b"AGGREGATE", b"MAX"], [b"WEIGHTS", b"2", b"1"]]), keys)
        if r == 13:
            keys = self.keys_for("zset", 2, write=False)
            return Cmd([self.pick([b"ZUNION", b"ZINTER", b"ZDIFF"]), b"2"] + keys +
                       [b"WITHSCORES"], keys)
        if r == 14:
            return Cmd([b"ZREVRANGEBYSCORE", k, b"+inf", b"-inf", b"LIMIT", b"0", b"3"], [k])
        return Cmd([b"ZREMRANGEBYRANK", k, b"0", b"0"], [k])

    def _stream(self, conn, m):
        k = self.key("stream")
        r = self.rng.randrange(13)
        if r in (0, 1, 2):
            argv = [b"XADD", k]
            if self.rng.random() < 0.15:
                argv.append(b"NOMKSTREAM")
            if self.rng.random() < 0.2:
                argv += [b"MAXLEN", self.pick([b"3", b"5"])]
            argv.append(b"%d-%d" % (self.rng.randint(0, 30), self.rng.randint(0, 3)))
            argv += [self.pick(ks.FIELDS), self.raw_value()]
            return Cmd(argv, [k])
        if r == 3:
            return Cmd([b"XRANGE", k, b"-", b"+"] + self.pick([[], [b"COUNT", b"2"]]), [k])
        if r == 4:
            return Cmd([b"XREVRANGE", k, b"+", b"-", b"COUNT", b"3"], [k])
        if r == 5:
            return Cmd([b"XLEN", k], [k])
        if r == 6:
            return Cmd([b"XDEL", k, b"%d-%d" % (self.rng.randint(0, 30), self.rng.randint(0, 3))],
                       [k])
        if r == 7:
            return Cmd([b"XTRIM", k, b"MAXLEN", self.pick([b"2", b"4"])], [k])
        if r == 8:
            keys = self.keys_for("stream", self.rng.randint(1, 2), write=False)
            return Cmd([b"XREAD", b"COUNT", b"2", b"STREAMS"] + keys + [b"0"] * len(keys), keys)
        if r == 9:
            return Cmd([b"XGROUP", b"CREATE", k, b"g1", b"0"] + self.pick([[], [b"MKSTREAM"]]), [k])
        if r == 10:
            return Cmd([b"XREADGROUP", b"GROUP", b"g1", self.pick([b"c1", b"c2"]), b"COUNT", b"2",
                        b"STREAMS", k, b">"], [k])
        if r == 11:
            return Cmd([b"XACK", k, b"g1", b"%d-%d" % (self.rng.randint(0, 30),
                                                       self.rng.randint(0, 3))], [k])
        return Cmd([b"XPENDING", k, b"g1"], [k])

    def _generic(self, conn, m):
        kind = self.pick(list(ks.NAMES))
        k = self.key(kind)
        r = self.rng.randrange(13)
        if r == 0:
            return Cmd([b"TYPE", k], [k])
        if r == 1:
            return Cmd([b"EXPIRE", k, self.pick(BIG_SECONDS)] + self.pick([[], [b"NX"], [b"XX"]]),
                       [k])
        if r == 2:
            return Cmd([b"PEXPIRE", k, self.pick(BIG_MILLIS)], [k])
        if r == 3:
            return Cmd([b"EXPIREAT", k, FAR_UNIX_TIME], [k])
        if r == 4:
            return Cmd([b"PERSIST", k], [k])
        if r == 5:
            return Cmd([self.pick([b"TTL", b"PTTL", b"EXPIRETIME", b"PEXPIRETIME"]), k], [k])
        if r == 6:
            keys = self.keys_for(kind, 2, write=True)
            return Cmd([self.pick([b"RENAME", b"RENAMENX"])] + keys, keys)
        if r == 7:
            keys = self.keys_for(kind, 2, write=True)
            return Cmd([b"COPY"] + keys + self.pick([[], [b"REPLACE"]]), keys)
        if r == 8:
            return Cmd([b"OBJECT", b"ENCODING", k], [k])
        if r == 9:
            return Cmd([b"DBSIZE"], [])
        if r == 10:
            return Cmd([b"KEYS", self.pick([b"*", b"{a}*", b"*1", b"nomatch*"])], [])
        if r == 11:
            return Cmd([b"TTL", k], [k])
        return Cmd([b"EXISTS", k], [k])

    def _script(self, conn, m):
        r = self.rng.randrange(10)
        if r <= 4:
            script = self.pick(SCRIPTS)
            nkeys = 2 if script == SCRIPT_PAIR else 1
            keys = self.keys_for("string", nkeys, write=script != SCRIPT_GET)
            # EVALSHA only for scripts that SCRIPT LOAD put on every shard: an EVAL caches its
            # script on one shard only (as on one Redis Cluster node), so an EVALSHA of it
            # elsewhere gets NOSCRIPT through the proxy.
            if script in self.scripts_loaded and self.rng.random() < 0.5:
                argv = [b"EVALSHA", sha1(script), b"%d" % nkeys] + keys
            else:
                self.scripts_evaluated.add(script)
                argv = [b"EVAL", script, b"%d" % nkeys] + keys
            if script in (SCRIPT_SET, SCRIPT_PAIR):
                argv.append(self.value())
            return Cmd(argv, keys)
        if r == 5:
            k = self.key("string")
            script = self.pick([SCRIPT_GET, SCRIPT_SET])
            self.scripts_evaluated.add(script)
            return Cmd([b"EVAL_RO", script, b"1", k, b"v"], [k])
        if r == 6 and self.forced_tag is None:
            script = self.pick(SCRIPTS)
            self.scripts_loaded.add(script)
            return Cmd([b"SCRIPT", b"LOAD", script], [])
        if r == 7 and self.forced_tag is None:
            # Only scripts whose presence is the same on every shard (see above).
            known = [s for s in SCRIPTS if s in self.scripts_loaded or s not in
                     self.scripts_evaluated]
            return Cmd([b"SCRIPT", b"EXISTS"] + [sha1(s) for s in known[:2]] + [b"0" * 40], [])
        if r == 8 and self.forced_tag is None:
            if not self.library_loaded or self.rng.random() < 0.2:
                self.library_loaded = True
                return Cmd([b"FUNCTION", b"LOAD"] + self.pick([[], [b"REPLACE"]]) + [LIBRARY], [])
        k = self.key("string")
        return Cmd([self.pick([b"FCALL", b"FCALL_RO"]), self.pick([b"dget", b"dlen", b"nofn"]),
                    b"1", k], [k])

    def _resp3_script(self, conn, m):
        """RESP3 streams only: a script whose reply has RESP3 types (RESP3_SCRIPTS)."""
        kind, script, argvs = self.pick(RESP3_SCRIPTS)
        k = self.key(kind)
        return Cmd([b"EVAL", script, b"1", k] + self.pick(argvs), [k])

    def _pubsub(self, conn, m):
        if self.downtime:
            return None
        r = self.rng.randrange(8)
        subscribed = sum(1 for x in self.models if x.subscribed)
        if r <= 1 and subscribed < len(self.models) - 1:
            chans = self.rng.sample(ks.CHANNELS, self.rng.randint(1, 2))
            m.channels.update(chans)
            return Cmd([b"SUBSCRIBE"] + chans)
        if r == 2 and subscribed < len(self.models) - 1:
            pats = self.rng.sample(ks.PATTERNS, 1)
            m.patterns.update(pats)
            return Cmd([b"PSUBSCRIBE"] + pats)
        if r == 3:
            return Cmd([b"SPUBLISH", self.pick(ks.CHANNELS), self.value()])
        if r == 4:
            return Cmd([b"PUBSUB", b"NUMSUB"] + self.rng.sample(ks.CHANNELS, 2))
        if r == 5:
            return Cmd([b"PUBSUB", b"NUMPAT"])
        return Cmd([b"PUBLISH", self.pick(ks.CHANNELS), self.raw_value()])

    def _subscribed_command(self, conn, m):
        r = self.rng.randrange(10)
        if r == 0:
            chans = self.rng.sample(ks.CHANNELS, self.rng.randint(1, 2))
            m.channels.update(chans)
            return Cmd([b"SUBSCRIBE"] + chans)
        if r == 1:
            chans = self.rng.sample(ks.CHANNELS, self.rng.randint(1, 2))
            m.channels.difference_update(chans)
            return Cmd([b"UNSUBSCRIBE"] + chans)
        if r == 2:
            m.channels.clear()
            return Cmd([b"UNSUBSCRIBE"])
        if r == 3:
            pats = self.rng.sample(ks.PATTERNS, 1)
            m.patterns.update(pats)
            return Cmd([b"PSUBSCRIBE"] + pats)
        if r == 4:
            m.patterns.clear()
            return Cmd([b"PUNSUBSCRIBE"])
        if r == 5:
            return Cmd([b"PING"] + self.pick([[], [b"hi"]]))
        if r == 6:
            return self._reset(conn)
        if r == 7:
            # Refused in subscribed mode: a valid request, or (a known bug) an invalid one.
            k = self.key("string")
            if self.rng.random() < 0.3:
                return Cmd(self.pick([[b"EXPIRE", k], [b"SCRIPT", b"NOSUCH"], [b"NOSUCHCMD"]]))
            return Cmd([b"GET", k], [k])
        if not m.patterns and self.rng.random() < 0.5:
            m.channels.clear()
            return Cmd([b"UNSUBSCRIBE"])
        return self._reset(conn)

    def _reset(self, conn):
        if self.own_publish and not self.known("reset_after_own_publish"):
            return Cmd([b"PING"])
        self.models[conn] = ConnModel()     # RESP2 again, whatever it was
        return Cmd([b"RESET"])

    def _hello(self, conn, m):
        """RESP3 streams only: HELLO with and without a version, SETNAME, and bad versions.
        HELLO 2 only while not subscribed (a RESP2 subscriber may send only pub/sub)."""
        r = self.rng.randrange(8)
        if r <= 1 and not m.subscribed:
            m.proto = 2
            return Cmd([b"HELLO", b"2"])
        if r == 2:
            return Cmd([b"HELLO"])
        if r == 3:
            m.proto = 3
            return Cmd([b"HELLO", b"3", b"SETNAME", self.pick([b"diff3", b"x1"])])
        if r == 4:
            return Cmd([b"HELLO", self.pick([b"4", b"1", b"x", b"-3"])])
        if r == 5:
            return Cmd([b"HELLO", b"3", self.pick([b"SETNAME", b"NOSUCH"])])
        m.proto = 3
        return Cmd([b"HELLO", b"3"])

    def _transaction(self, conn, m):
        r = self.rng.randrange(10)
        if r <= 4:
            m.multi = True
            m.tx_len = 0
            return Cmd([b"MULTI"])
        if r <= 6:
            tag = m.tag or self.pick(ks.TAGS)
            keys = [ks.tagged(tag, self.pick(ks.NAMES["string"] + ks.NAMES["list"]))
                    for _ in range(self.rng.randint(1, 2))]
            m.tag = tag
            m.watching = True
            return Cmd([b"WATCH"] + keys, keys)
        if r == 7:
            m.watching = False
            if not m.multi:
                m.tag = None
            return Cmd([b"UNWATCH"])
        if r == 8:
            return Cmd([b"EXEC"])       # without MULTI: an error, and it ends any WATCH
        return Cmd([b"DISCARD"])

    def _tx_command(self, conn, m):
        """The next command inside MULTI: keys of one tag, until EXEC or DISCARD."""
        m.tx_len += 1
        if m.tx_len > 7 or (m.tx_len > 1 and self.rng.random() < 0.25):
            cmd = Cmd([b"EXEC"] if self.rng.random() < 0.85 else [b"DISCARD"])
            self.models[conn] = ConnModel(channels=m.channels, patterns=m.patterns,
                                          proto=m.proto)
            return cmd
        if m.tag is None:
            m.tag = self.pick(ks.TAGS)
        r = self.rng.random()
        if r < 0.04:
            self.forced_tag = m.tag
            try:
                cmd = self._error(conn, m)
            finally:
                self.forced_tag = None
            if cmd.name == b"EVALSHA":
                # A keyless EVALSHA is refused by the proxy (allow-listed); inside MULTI that
                # would abort a transaction the reference runs.
                cmd = Cmd([b"EVAL", b"return", b"0"])
            return cmd
        if r < 0.07:
            return Cmd([self.pick([b"PING", b"ECHO"]), b"hi"])
        if r < 0.09:
            return Cmd([b"WATCH", ks.tagged(m.tag, b"s1")], [ks.tagged(m.tag, b"s1")])
        if r < 0.10:
            return Cmd([b"MULTI"])
        if r < 0.13 and self.mode == "single" and not any(
                x.watching for i, x in enumerate(self.models) if i != conn):
            # Probes the proxy refuses inside a transaction (allow-listed); the reference runs
            # the transaction, so the runner copies its keys over after EXEC.
            if self.rng.random() < 0.5:
                return Cmd([b"DBSIZE"])
            other = self.pick([t for t in ks.TAGS if t != m.tag])
            k = ks.tagged(other, b"s1")
            return Cmd([b"SET", k, self.value()], [k])
        self.forced_tag = m.tag
        try:
            weights, makers = [], []
            for w, f in ((14, self._string), (4, self._multikey_split), (5, self._hash),
                         (6, self._list), (5, self._set), (5, self._zset), (3, self._stream),
                         (4, self._generic), (2, self._script)):
                weights.append(w)
                makers.append(f)
            while True:
                cmd = self.rng.choices(makers, weights)[0](conn, m)
                if cmd is not None and cmd.name not in (b"DBSIZE", b"KEYS", b"SCRIPT",
                                                        b"FUNCTION"):
                    return cmd
        finally:
            self.forced_tag = None

    def _blocking(self, conn, m):
        r = self.rng.randrange(4)
        if r == 0:
            k = self.key("list")
            return Cmd([self.pick([b"BLPOP", b"BRPOP"]), k, BLOCK_SHORT], [k])
        if r == 1:
            keys = self.keys_for("list", 2, write=True)
            return Cmd([b"BLPOP"] + keys + [BLOCK_SHORT], keys)
        if r == 2:
            keys = self.keys_for("list", 2, write=True)
            return Cmd([b"BLMOVE"] + keys + [b"LEFT", b"RIGHT", BLOCK_SHORT], keys)
        k = self.key("zset")
        return Cmd([self.pick([b"BZPOPMIN", b"BZPOPMAX"]), k, BLOCK_SHORT], [k])

    def _wake(self, conn):
        """A blocking command on an empty key, woken by another connection's write."""
        if self.models[conn].subscribed or self.models[conn].multi:
            return None
        others = [i for i, x in enumerate(self.models)
                  if i != conn and not x.subscribed and not x.multi]
        if not others:
            return None
        waker_conn = self.pick(others)
        tag = self.pick(ks.TAGS)
        r = self.rng.randrange(4)
        if r == 0:
            k = ks.WAKE_LIST[tag]
            blocked = Cmd([self.pick([b"BLPOP", b"BRPOP"]), k, BLOCK_WAKE], [k])
            waker = Cmd([b"RPUSH", k, self.value()], [k])
        elif r == 1:
            k = ks.WAKE_LIST[tag]
            dst = ks.tagged(tag, b"l2")
            blocked = Cmd([b"BLMOVE", k, dst, b"LEFT", b"LEFT", BLOCK_WAKE], [k, dst])
            waker = Cmd([b"LPUSH", k, self.value()], [k])
        elif r == 2:
            k = ks.WAKE_ZSET[tag]
            blocked = Cmd([b"BZPOPMIN", k, BLOCK_WAKE], [k])
            waker = Cmd([b"ZADD", k, b"1", self.pick(ks.ZMEMBERS)], [k])
        else:
            k = ks.WAKE_STREAM[tag]
            self.stream_seq += 1
            blocked = Cmd([b"XREAD", b"BLOCK", BLOCK_WAKE + b"000", b"STREAMS", k, b"$"], [k])
            waker = Cmd([b"XADD", k, b"%d-1" % self.stream_seq, b"f", self.value()], [k])
        blocked.wake_conn = waker_conn
        blocked.waker = waker
        return blocked

    def _connection(self, conn, m):
        r = self.rng.randrange(8)
        if r == 0:
            return Cmd([b"PING"] + self.pick([[], [b"hello"]]))
        if r == 1:
            return Cmd([b"ECHO", self.raw_value()])
        if r == 2:
            return Cmd([b"CLIENT", b"SETNAME", self.pick([b"diff", b"x1", b"has space"])])
        if r == 3:
            return Cmd([b"CLIENT", b"GETNAME"])
        if r == 4:
            return Cmd([b"SELECT", self.pick([b"0", b"x"])])
        if r == 5:
            return self._reset(conn)
        if r == 6:
            return Cmd([b"SPUBLISH", self.pick(ks.CHANNELS), b"m"])
        return Cmd([b"PUBLISH", self.pick(ks.CHANNELS), b"m"])

    def _error(self, conn, m):
        """Requests that fail the same way everywhere: arity, syntax, values, unknown names."""
        k = self.key("string")
        forms = [
            [b"GET"], [b"SET", k], [b"MSET", k], [b"DEL"], [b"MGET"], [b"EXISTS"],
            [b"HSET", k, b"f"], [b"EXPIRE", k], [b"LPUSH", k], [b"ZADD", k, b"1"],
            [b"XADD", k, b"1-1"], [b"SET", k, b"v", b"EX"], [b"SET", k, b"v", b"NX", b"XX"],
            [b"SET", k, b"v", b"EX", b"0"],
            [b"SET", k, b"v", b"EX", b"x"], [b"INCRBY", k, b"1.5"], [b"EXPIRE", k, b"abc"],
            [b"ZADD", k, b"NX", b"XX", b"1", b"m"], [b"LPOS", k, b"v", b"RANK", b"0"],
            [b"GETRANGE", k, b"a", b"b"], [b"NOSUCHCMD"], [b"NOSUCHCMD", k, b"arg"],
            [b"get_", k], [b"EVALSHA", b"0" * 40, b"0"], [b"EVAL", b"return", b"0"],
            [b"EVAL", b"error('boom')", b"0"], [b"ECHO"],
            [b"SELECT"], [b"CLIENT", b"NOSUCH"], [b"WATCH"], [b"SUBSCRIBE"], [b"PUBLISH", b"c"],
            [b"DBSIZE", b"x"], [b"KEYS"], [b"XREAD", b"STREAMS", k],
            [b"BLPOP", k], [b"BLPOP", k, b"-1"], [b"BLPOP", k, b"x"],
        ]
        argv = self.pick(forms)
        keys = [a for a in argv[1:] if a == k][:1]
        return Cmd(argv, keys)

    def _unsupported(self, conn, m):
        """Commands the proxy refuses on purpose (docs/commands.md) and that change nothing on
        the reference; the refusal is allow-listed."""
        return Cmd(self.pick([[b"WAIT", b"0", b"0"], [b"ROLE"], [b"LATENCY", b"DOCTOR"],
                              [b"OBJECT", b"HELP"], [b"MEMORY", b"DOCTOR"], [b"LOLWUT"],
                              [b"CLUSTER", b"INFO"], [b"XINFO", b"HELP"]]))

    def _flushall(self, conn, m):
        if any(x.watching for x in self.models):
            return None
        return Cmd([b"FLUSHALL"] + self.pick([[], [b"SYNC"]]))

    def _known_bug(self, conn, m):
        k = self.key("string")
        forms = {
            "ping_arity": [[b"PING", b"a", b"b"]],
            "numkeys_errors": [[b"EVAL", b"return 1", b"3", k], [b"EVAL", b"return 1", b"-1"],
                               [b"EVAL", b"return 1", b"x"], [b"FCALL", b"dget", b"x"]],
            "subcommand_arity": [[b"CLIENT", b"SETNAME"], [b"CLIENT", b"GETNAME", b"x"],
                                 [b"SCRIPT", b"LOAD"], [b"OBJECT", b"ENCODING"],
                                 [b"CONFIG", b"GET"], [b"COMMAND", b"GETKEYS"]],
            "exec_arity": [[b"EXEC", b"x"]],
            "command_introspection": [
                [b"COMMAND", b"COUNT"], [b"COMMAND", b"INFO", b"get", b"nosuch"],
                [b"COMMAND", b"DOCS", b"get"],
                [b"COMMAND", b"LIST", b"FILTERBY", b"PATTERN", b"xa*"]],
        }
        enabled = [argv for name, argvs in forms.items() if self.known(name) for argv in argvs]
        if not enabled:
            return None
        argv = self.pick(enabled)
        return Cmd(argv, [k] if k in argv else [])


def messages_expected(publish_channel, channels, patterns):
    """How many messages one PUBLISH delivers to a connection with these subscriptions."""
    count = 1 if publish_channel in channels else 0
    return count + sum(1 for p in patterns if fnmatchcase(publish_channel.decode(), p.decode()))
