"""Byte for byte against redis-server: several hundred requests that the proxy must answer exactly
as a redis-server does.

The corpus is built from the reference server's own command table, so it grows with it: every
command and subcommand with too few and (for a fixed arity) too many arguments, every container
without a subcommand and with an unknown one, unknown commands, every form of COMMAND, CONFIG GET
of every parameter, and errors that a shard answers (wrong types, bad integers, bad options).
Requests go to the proxy (3 shards, 2 workers) and to a reference redis-server of the same build,
one connection each, in the same order, and the replies are compared as bytes.

The deliberate differences are listed in one place, DIFFERENCES below, each with where the
documentation states it; a reply may differ from redis-server's only as one of them allows.
Every process is stopped by PID (sp_procs.Processes).
"""

import os
import re
import shutil
import sys
import tempfile

import pytest

from sp_procs import Processes

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "differential"))
import resp  # noqa: E402  (tests/differential/resp.py: the exact bytes of each reply)

TIMEOUT = 10.0
NOT_SUPPORTED = re.compile(rb"^-ERR command '([a-z_| -]+)' is not supported by shardproxy\r\n$")


def _documented_unsupported():
    """The commands docs/commands.md lists under "Unsupported", as `name` or `name|sub`."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "docs", "commands.md")) as f:
        section = f.read().split("## Unsupported", 1)[1]
    names = set()
    for line in section.splitlines():
        if line.startswith("|"):
            names.update(n.lower().replace(" ", "|") for n in re.findall(r"`([A-Z][A-Z_ -]*)`",
                                                                          line))
    return names


UNSUPPORTED = _documented_unsupported()

# CONFIG GET parameters that are the proxy's own (docs/operations.md, "CONFIG GET and CONFIG
# SET"): answered from the proxy's configuration, not the shards'.
PROXY_PARAMETERS = {"bind", "port", "databases", "maxclients", "timeout", "tcp-keepalive",
                    "proto-max-bulk-len", "cluster-enabled", "slowlog-log-slower-than",
                    "slowlog-max-len", "requirepass", "masterauth", "masteruser"}
# Per instance (files, names, addresses): every server has its own, the first shard's is shown.
PER_INSTANCE = {"dir", "pidfile", "logfile", "dbfilename", "unixsocket", "appendfilename",
                "appenddirname", "cluster-config-file", "syslog-ident", "replicaof", "slaveof",
                "replica-announce-ip", "replica-announce-port"}


def _unsupported(request, proxy, ref):
    m = NOT_SUPPORTED.match(proxy)
    return m is not None and m.group(1).decode() in UNSUPPORTED


def _keyless_script(request, proxy, ref):
    return (request[0].upper() in (b"EVAL", b"EVALSHA", b"FCALL", b"EVAL_RO", b"EVALSHA_RO",
                                   b"FCALL_RO") and len(request) > 2 and request[2] == b"0"
            and proxy.startswith(b"-ERR a script or function called with no keys"))


def _proxy_parameter(request, proxy, ref):
    return (request[:2] == [b"CONFIG", b"GET"] and len(request) == 3 and
            request[2].decode().lower() in PROXY_PARAMETERS | PER_INSTANCE)


# The one list of deliberate differences: (name, where it is documented, predicate).
DIFFERENCES = [
    ("refused as unsupported", "docs/commands.md, Unsupported", _unsupported),
    ("the proxy's own or a per-instance CONFIG parameter",
     "docs/operations.md, CONFIG GET and CONFIG SET", _proxy_parameter),
    ("a script called with no keys that may reach the keyspace", "README: keyless_scripts",
     _keyless_script),
]


def _sorted_elements(reply):
    """An array's elements, sorted: COMMAND LIST and COMMAND list the commands in redis-server's
    dict order, seeded at random per process (docs/commands.md, COMMAND: Order)."""
    parts = resp.split(reply)
    return reply if parts is None else (parts[0], sorted(parts[1]))


def _sorted_pairs(reply):
    """CONFIG GET's name/value pairs, sorted: redis-server lists them in its config dict's order,
    seeded at random per process (two redis-servers disagree; docs/operations.md)."""
    parts = resp.split(reply)
    if parts is None:
        return reply
    head, elements = parts
    return head, sorted(zip(elements[0::2], elements[1::2]))


ORDER_FREE = {(b"COMMAND", b"LIST")}


class Pair:
    """The same requests to the proxy and to the reference, replies compared."""

    def __init__(self, proxy_port, ref_port):
        self.ports = (proxy_port, ref_port)
        self.proxy = resp.Connection(proxy_port, TIMEOUT)
        self.ref = resp.Connection(ref_port, TIMEOUT)
        self.compared = 0
        self.allowed = {name: 0 for name, _, _ in DIFFERENCES}
        self.mismatches = []

    def close(self):
        self.proxy.close()
        self.ref.close()

    def check(self, request):
        request = [a if isinstance(a, bytes) else str(a).encode() for a in request]
        data = resp.encode(request)
        self.proxy.send(data)
        self.ref.send(data)
        got = self.proxy.read_reply(TIMEOUT)
        want = self.ref.read_reply(TIMEOUT)
        self.compared += 1
        if tuple(w.upper() for w in request[:2]) in ORDER_FREE:
            got, want = _sorted_elements(got), _sorted_elements(want)
        elif [w.upper() for w in request[:2]] == [b"CONFIG", b"GET"]:
            got, want = _sorted_pairs(got), _sorted_pairs(want)
        if got == want:
            return
        for name, _, allows in DIFFERENCES:
            if allows(request, got if isinstance(got, bytes) else b"", want):
                self.allowed[name] += 1
                return
        self.mismatches.append((request, got, want))


@pytest.fixture(scope="module")
def pair():
    tmp = tempfile.mkdtemp(prefix="sp-corpus-")
    procs = Processes(tmp)
    try:
        shard_ports = [procs.redis("shard%d" % i)[1] for i in range(3)]
        _, ref_port = procs.redis("reference")
        _, port, _ = procs.proxy(shard_ports, workers=2)
        p = Pair(port, ref_port)
        yield p
        p.close()
        assert "ERROR" not in procs.log("proxy") and "critical" not in procs.log("proxy")
    finally:
        procs.close()
        shutil.rmtree(tmp, ignore_errors=True)


def command_table(pair):
    """[(words, arity, is_container)] of every command and subcommand of the reference."""
    pair.ref.send(resp.encode([b"COMMAND"]))
    table = []
    for entry in resp.decode(pair.ref.read_reply(TIMEOUT)):
        name, arity, subcommands = entry[0], entry[1], entry[9] if len(entry) > 9 else []
        table.append(([name.upper()], arity, bool(subcommands)))
        for sub in subcommands:
            words = sub[0].upper().split(b"|")
            table.append((words, sub[1], False))
    return sorted(table)


def report(pair):
    lines = ["%d of %d requests differ:" % (len(pair.mismatches), pair.compared)]
    for request, got, want in pair.mismatches[:40]:
        lines.append("  %r\n    proxy: %s\n    redis: %s" % (b" ".join(request), repr(got)[:200],
                                                            repr(want)[:200]))
    return "\n".join(lines)


def test_wrong_arity_and_unknown_subcommands(pair):
    table = command_table(pair)
    assert len(table) > 300
    start = pair.compared
    for words, arity, container in table:
        need = abs(arity)
        if need - 1 >= len(words):  # too few: the name (and subcommand) with one argument short
            pair.check(words + [b"x"] * (need - 1 - len(words)))
        if arity > 0:  # a fixed arity: one too many
            pair.check(words + [b"x"] * (arity + 1 - len(words)))
        if container:
            pair.check(words + [b"NOSUCH"])
            pair.check(words + [b"nosuch", b"a"])
    pair.check([b"NOSUCHCOMMAND"])
    pair.check([b"NOSUCHCOMMAND", b"a", b"b"])
    pair.check([b"nosuch", b"x" * 200])
    assert pair.compared - start >= 300
    assert pair.mismatches == [], report(pair)


def test_every_command_form(pair):
    forms = [
        # (COMMAND and COMMAND INFO without names list every entry with a container's
        # subcommands in another order: command_introspection_test compares them entry by entry.)
        ["COMMAND", "COUNT"], ["COMMAND", "LIST"], ["COMMAND", "HELP"],
        ["COMMAND", "INFO", "get", "set", "nosuch", "zadd"],
        ["COMMAND", "DOCS", "get", "nosuch", "xadd"], ["COMMAND", "DOCS", "config|get"],
        ["COMMAND", "GETKEYS", "SET", "a", "b"], ["COMMAND", "GETKEYS", "GET"],
        ["COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"], ["COMMAND", "GETKEYS", "NOSUCH", "a"],
        ["COMMAND", "GETKEYS", "EVAL", "return 1", "0", "k1", "k2"],
        ["COMMAND", "GETKEYS", "ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"],
        ["COMMAND", "GETKEYS", "PING"], ["COMMAND", "GETKEYS"],
        ["COMMAND", "GETKEYSANDFLAGS", "LMOVE", "a", "b", "LEFT", "RIGHT"],
        ["COMMAND", "GETKEYSANDFLAGS", "SORT", "a", "STORE", "b"],
        ["COMMAND", "LIST", "FILTERBY", "ACLCAT", "hash"],
        ["COMMAND", "LIST", "FILTERBY", "PATTERN", "x*"],
        ["COMMAND", "LIST", "FILTERBY", "MODULE", "nosuch"],
        ["COMMAND", "LIST", "FILTERBY", "NOSUCH", "x"], ["COMMAND", "LIST", "FILTERBY"],
        ["COMMAND", "LIST", "junk"], ["COMMAND", "NOSUCH"], ["COMMAND", "COUNT", "x"],
    ]
    for form in forms:
        pair.check(form)
    assert pair.mismatches == [], report(pair)


def test_config_get_of_every_parameter(pair):
    pair.ref.send(resp.encode([b"CONFIG", b"GET", b"*"]))
    flat = resp.decode(pair.ref.read_reply(TIMEOUT))
    names = sorted(flat[0::2])
    assert len(names) > 150
    for name in names:
        pair.check([b"CONFIG", b"GET", name])
    for form in (["CONFIG", "GET", "nosuch"], ["CONFIG", "GET", "maxmemory*"],
                 ["CONFIG", "GET", "save", "appendonly"], ["CONFIG", "NOSUCH"],
                 ["CONFIG", "HELP"]):
        pair.check(form)
    assert pair.mismatches == [], report(pair)
    # Most answers are the shards' own, identical to the reference's.
    assert pair.allowed["the proxy's own or a per-instance CONFIG parameter"] <= 30


def test_errors_the_shards_answer(pair):
    for request in (
            ["SET", "corpus:s", "v"], ["LPUSH", "corpus:s", "x"], ["INCR", "corpus:s"],
            ["INCRBY", "corpus:n", "abc"], ["INCRBYFLOAT", "corpus:n", "x"],
            ["SET", "corpus:t", "v", "EX", "-1"], ["SET", "corpus:t", "v", "EX", "abc"],
            ["SET", "corpus:t", "v", "NX", "XX"], ["EXPIRE", "corpus:s", "abc"],
            ["ZADD", "corpus:z", "x", "y"], ["ZADD", "corpus:z", "NX", "XX", "1", "a"],
            ["SETRANGE", "corpus:s", "-1", "x"], ["GETRANGE", "corpus:s", "a", "b"],
            ["BITCOUNT", "corpus:s", "0"], ["HSET", "corpus:h", "f"], ["HINCRBY", "corpus:s", "f", "1"],
            ["XADD", "corpus:x", "*", "f"], ["XADD", "corpus:x", "abc", "f", "v"],
            ["LRANGE", "corpus:l", "a", "b"], ["LPOS", "corpus:l", "x", "RANK", "0"],
            ["SINTERCARD", "1", "corpus:set", "LIMIT", "-1"], ["OBJECT", "ENCODING", "nosuch"],
            ["GETEX", "corpus:s", "PX", "0"], ["COPY", "corpus:s", "corpus:s"],
            ["PING", "a", "b"], ["ECHO"], ["SELECT", "abc"], ["DBSIZE", "x"],
            ["SCAN", "abc"], ["KEYS"], ["EVAL", "return redis.call('nosuch')", "0"],
            ["EVAL", "syntax error here", "0"], ["FCALL", "nosuch", "0"],
            ["SCRIPT", "EXISTS"], ["SCRIPT", "FLUSH", "junk"], ["FUNCTION", "DELETE", "nosuch"],
            ["CLIENT", "SETNAME", "a b"], ["CLIENT", "KILL", "ID", "abc"],
            ["CLIENT", "NO-EVICT", "maybe"], ["DEL", "corpus:s"]):
        pair.check(request)
    assert pair.mismatches == [], report(pair)


def test_errors_of_a_subscribed_connection(pair):
    # A RESP2 subscriber: redis-server reports an unknown command or subcommand and a wrong arity
    # before the context ("Can't execute ... in this context").
    sub = Pair(*pair.ports)
    try:
        for request in (["SUBSCRIBE", "corpus:ch"], ["EXPIRE", "k"], ["SCRIPT", "NOSUCH"],
                        ["NOSUCHCMD", "a"], ["GET", "k"], ["SET", "k", "v"], ["SUBSCRIBE"],
                        ["PING", "a", "b"], ["PING"], ["OBJECT", "HELP"], ["UNSUBSCRIBE"]):
            sub.check(request)
        assert sub.compared == 11
        assert sub.mismatches == [], report(sub)
    finally:
        sub.close()
