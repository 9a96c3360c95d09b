#!/usr/bin/python3
"""Generates the proxy's command table from a live redis-server 7.0.

Starts its own redis-server on a free loopback port (no persistence, its own temp dir), reads
COMMAND INFO and COMMAND DOCS for every command and subcommand, stops the server by PID, overlays
the proxy's policy (POLICY below) and writes:

  proxy/src/resp/command_table_data.inc   C++ data for sp::resp::CommandTable (checked in)
  docs/commands.md                        the commands by class, for the README

Usage: /usr/bin/python3 tools/gen-command-table.py [--redis-server PATH] [--out-dir REPO_ROOT]

The RESP bytes of each COMMAND INFO and COMMAND DOCS entry are kept exactly as the server sent
them (sliced out of the raw reply, never re-encoded from parsed values), so the proxy can answer
COMMAND, COMMAND INFO and COMMAND DOCS byte-identically. The one liberty taken is the order of a
container's subcommands (its nested COMMAND INFO entries and its COMMAND DOCS "subcommands" map):
redis-server lists them in its dict's order, which is seeded at random in every process (two
servers of the same build disagree), so no order can match it; the generator sorts them by name so
that its output is reproducible. A subcommand's entries are slices of its container's.

Beside the RESP bytes the table carries what COMMAND GETKEYS / GETKEYSANDFLAGS and COMMAND LIST
FILTERBY need: Redis' own key specs with their flags, the getkeys function redis-server falls
back to (GETKEYS_PROCS: COMMAND INFO does not show it) and the ACL categories.
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

# --------------------------------------------------------------------------------------------
# The proxy's policy. Every command and subcommand ends up in exactly one class:
#   local        answered by the proxy itself (kCmdLocal)
#   split        multi-key, split per shard and merged (kCmdSplit + MergeRule)
#   fanout       whole-keyspace: sent to every shard (or the one a SCAN cursor names) and
#                merged (kCmdFanout + MergeRule)
#   session      served by the session's connection state: transactions, pub/sub, AUTH, HELLO,
#                RESET (kCmdSession; see session/session_state.h)
#   unsupported  refused with -ERR ... not supported by shardproxy (kCmdUnsupported)
#   routed       everything else: forwarded to the shard that owns its key(s); blocking ones
#                (kCmdBlocking: BLPOP, XREAD BLOCK, ...) on a dedicated connection
# The rules are applied in this order, first match wins:
#   1. LOCAL lists it                                   -> local
#   2. SPLIT lists it                                   -> split
#   3. FANOUT lists it                                  -> fanout
#   4. SESSION lists it                                 -> session
#   5. UNSUPPORTED lists it (explicit, with a reason)   -> unsupported
#   6. subcommand of a LOCAL container, not in LOCAL    -> unsupported ("not answered locally")
#   7. Redis flag "pubsub"                              -> unsupported ("pub/sub")
#   8. Redis flag "admin"                               -> unsupported ("server administration")
#   9. takes no key at all (no key specs, first key 0)  -> unsupported ("keyless: no fan-out")
#  10. otherwise                                        -> routed by key
# A container (CLIENT, OBJECT, ...) gets a class of its own. A request whose subcommand is unknown
# is answered redis-server's "unknown subcommand" error whatever that class (the subcommand is
# unknown to redis-server too); the class governs the container named alone (its arity error).
POLICY = {
    # name -> (MergeRule enumerator, arguments per key)
    "split": {
        "mget": ("kArrayInKeyOrder", 1),
        "mset": ("kAllOk", 2),
        "del": ("kSumIntegers", 1),
        "unlink": ("kSumIntegers", 1),
        "exists": ("kSumIntegers", 1),
        "touch": ("kSumIntegers", 1),
    },
    "local": [
        "ping", "echo", "quit", "select", "info",
        "command", "command|count", "command|info", "command|docs", "command|list",
        "command|getkeys", "command|getkeysandflags", "command|help",
        "client", "client|setname", "client|getname", "client|id",
        "client|info", "client|list", "client|kill", "client|no-evict",
        "config", "config|get", "config|help",
        # The proxy's slow log, in redis-server's form (session/admin_commands.cc).
        "slowlog", "slowlog|get", "slowlog|len", "slowlog|reset", "slowlog|help",
        # The proxy's own admin command (SYNTHETIC below), answered by session/admin_commands.cc.
        "proxy", "proxy|info", "proxy|shards", "proxy|slots", "proxy|config", "proxy|slowlog",
        "proxy|reload", "proxy|health", "proxy|help",
    ],
    # Exceptions to the generic rules: keyed commands the proxy refuses, and keyless ones whose
    # reason is more specific than "keyless". Keyless commands not listed here are refused by
    # rule 8 anyway.
    # Whole-keyspace commands: name -> MergeRule enumerator (see resp/command_table.h).
    # kFirstShard commands are sent to the first shard only; kScanCursor to the shard the cursor
    # names; CONFIG SET only where config allows it (otherwise refused by the session).
    "fanout": {
        "dbsize": "kSumIntegers", "keys": "kConcatArrays", "randomkey": "kRandomNonNull",
        "flushdb": "kAllOk", "flushall": "kAllOk", "lastsave": "kMinInteger",
        "time": "kFirstShard", "scan": "kScanCursor",
        "script|load": "kAllEqual", "script|exists": "kAndIntegers", "script|flush": "kAllOk",
        "function|load": "kAllEqual", "function|flush": "kAllOk", "function|delete": "kAllOk",
        "function|restore": "kAllOk", "function|list": "kFirstShard",
        "function|dump": "kFirstShard",
        # Sent on connections of their own (the shared pipelines wait behind the script).
        "script|kill": "kAnyOk", "function|kill": "kAnyOk",
        "pubsub|channels": "kUnionArrays", "pubsub|shardchannels": "kUnionArrays",
        "pubsub|numsub": "kSumPairs", "pubsub|shardnumsub": "kSumPairs",
        "pubsub|numpat": "kFirstShard",
        "config|set": "kAllOk",
        # The proxy resets its own INFO counters too (control/info_report.h).
        "config|resetstat": "kAllOk",
        "latency|latest": "kLatestPerEvent", "latency|reset": "kSumIntegers",
        "latency|help": "kFirstShard",
    },
    # Served by the session's state machinery (session/session_state.h).
    "session": [
        "multi", "exec", "discard", "watch", "unwatch",
        "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe",
        "auth", "hello", "reset",
    ],
    # The proxy's own handler of a command (resp::Handler): the session switches on it instead
    # of comparing names. Every local and session command that is not a container has one;
    # routed and fan-out commands have one where the session treats them specially.
    "handlers": {
        "ping": "kPing", "echo": "kEcho", "quit": "kQuit", "select": "kSelect", "info": "kInfo",
        "command": "kCommand", "command|count": "kCommandCount", "command|info": "kCommandInfo",
        "command|docs": "kCommandDocs", "command|list": "kCommandList",
        "command|getkeys": "kCommandGetKeys", "command|getkeysandflags": "kCommandGetKeysAndFlags",
        "command|help": "kCommandHelp",
        "client|setname": "kClientSetName", "client|getname": "kClientGetName",
        "client|id": "kClientId", "client|info": "kClientInfo", "client|list": "kClientList",
        "client|kill": "kClientKill", "client|no-evict": "kClientNoEvict",
        "client|tracking": "kClientTracking", "client|caching": "kClientTracking",
        "config|get": "kConfigGet", "config|help": "kConfigHelp", "config|set": "kConfigSet",
        "config|resetstat": "kConfigResetStat",
        "slowlog|get": "kSlowlog", "slowlog|len": "kSlowlog", "slowlog|reset": "kSlowlog",
        "slowlog|help": "kSlowlogHelp",
        "proxy|info": "kProxyInfo", "proxy|shards": "kProxyShards", "proxy|slots": "kProxySlots",
        "proxy|config": "kProxyConfig", "proxy|slowlog": "kProxySlowlog",
        "proxy|reload": "kProxyReload", "proxy|health": "kProxyHealth", "proxy|help": "kProxyHelp",
        "multi": "kMulti", "exec": "kExec", "discard": "kDiscard", "watch": "kWatch",
        "unwatch": "kUnwatch", "auth": "kAuth", "hello": "kHello", "reset": "kReset",
        "subscribe": "kSubscribe", "psubscribe": "kPSubscribe", "ssubscribe": "kSSubscribe",
        "unsubscribe": "kUnsubscribe", "punsubscribe": "kPUnsubscribe",
        "sunsubscribe": "kSUnsubscribe",
        "publish": "kPublish", "spublish": "kPublish",
        "lmpop": "kListMpop", "blmpop": "kListMpop", "zmpop": "kZsetMpop", "bzmpop": "kZsetMpop",
        "eval": "kEval", "eval_ro": "kEvalRo", "evalsha": "kEvalSha", "evalsha_ro": "kEvalShaRo",
        "fcall": "kFcall", "fcall_ro": "kFcallRo",
        "xread": "kXread", "xreadgroup": "kXread",
    },
    # Commands only an admin user may send (auth.users' admin: session/client_auth.h), beside
    # every PROXY subcommand and INFO SHARDS (kCmdAdminOnly).
    "admin_only": [
        "flushall", "flushdb", "keys", "config|set", "client|kill", "client|list",
        "script|flush", "function|flush", "function|delete", "function|restore",
    ],
    # Pub/sub commands routed like keyed commands: their channel (first argument) picks the
    # shard by its slot, as Redis Cluster routes sharded channels. Only routing changes; their
    # COMMAND INFO stays Redis' own (no keys).
    "channel_keys": ["publish", "spublish"],
    "unsupported": {
        "move": "moves keys between databases", "swapdb": "moves keys between databases",
        "migrate": "moves keys between instances",
        "restore-asking": "cluster-internal", "asking": "cluster-internal",
        "readonly": "cluster-internal", "readwrite": "cluster-internal",
        # WAIT counts the replicas that acknowledged the calling connection's writes; a client's
        # writes reach its shards on connections shared with other clients, so no shard could
        # count them, and a count from another connection would over-report.
        "wait": "writes travel on shared connections: replica acknowledgements cannot be counted",
    },
    # Routing key specs that replace Redis' own where Redis marks them "unknown" but a keyword
    # finds the key: SORT ... STORE dest (the last STORE wins, as in Redis' sortGetKeys). The
    # BY/GET spec stays unknown (falls back to the legacy range: the sorted key itself).
    # COMMAND INFO bytes (info_resp) are not affected.
    "keyspec_overrides": {
        "sort": [
            {"begin": ("index", 1), "find": ("range", 0, 1, 0)},
            {"begin": ("unknown",), "find": ("unknown",)},
            {"begin": ("keyword", "STORE", -2), "find": ("range", 0, 1, 0)},
        ],
    },
}

# Commands of the proxy itself, not of redis-server: added to the table as if the server had
# reported them (COMMAND INFO / COMMAND DOCS entries encoded here), flagged kCmdProxy, and
# classified by POLICY like any other. name -> (arity, summary, subcommands {name: (arity,
# summary)}).
SYNTHETIC = {
    "proxy": (-2, "Administers shardproxy: its INFO, shards, slot map, config, slow log, reload "
                  "and health.",
              {
                  "info": (-2, "Returns the proxy's INFO sections (server clients stats keyspace "
                               "shards)."),
                  "shards": (2, "Returns every shard with its address, state and counters."),
                  "slots": (2, "Returns the slot ranges and the shard that owns each."),
                  "config": (-4, "PROXY CONFIG GET pattern [pattern ...]: the effective "
                                 "configuration."),
                  "slowlog": (-3, "PROXY SLOWLOG GET [count] | LEN | RESET: the proxy-side slow "
                                  "log."),
                  "reload": (2, "Re-reads the configuration file and applies it without dropping "
                                "connections."),
                  "health": (2, "Returns the proxy's liveness and readiness, as the metrics "
                                "listener's /healthz and /readyz report them."),
                  "help": (2, "Shows the PROXY subcommands."),
              }),
}
SYNTHETIC_FLAGS = ["admin", "noscript", "loading", "stale"]
SYNTHETIC_ACL = ["@admin", "@slow", "@dangerous"]
SYNTHETIC_SINCE = "0.1.0"  # shardproxy's version that introduced the command

CLASSES = ("routed", "split", "fanout", "session", "local", "unsupported")
REASON_LOCAL_CONTAINER = "not answered locally"
REASON_PUBSUB = "pub/sub"
REASON_ADMIN = "server administration"
REASON_KEYLESS = "keyless: no fan-out"

REDIS_FLAG_BITS = [
    ("write", "kCmdWrite"),
    ("readonly", "kCmdReadOnly"),
    ("admin", "kCmdAdmin"),
    ("blocking", "kCmdBlocking"),
    ("pubsub", "kCmdPubSub"),
    ("movablekeys", "kCmdMovableKeys"),
    ("no_mandatory_keys", "kCmdNoMandatoryKeys"),
]

# Key-spec flags (COMMAND INFO key specs, COMMAND GETKEYSANDFLAGS) -> KeySpecFlag enumerator, in
# the order redis-server lists them.
KEY_SPEC_FLAG_BITS = [
    ("RO", "kKeyRO"), ("RW", "kKeyRW"), ("OW", "kKeyOW"), ("RM", "kKeyRM"),
    ("access", "kKeyAccess"), ("update", "kKeyUpdate"), ("insert", "kKeyInsert"),
    ("delete", "kKeyDelete"), ("not_key", "kKeyNotKey"), ("incomplete", "kKeyIncomplete"),
    ("variable_flags", "kKeyVariableFlags"),
]

# The getkeys function of a redis-server 7.0 command (src/commands/*.json "get_keys_function"),
# as a KeysProc enumerator (resp/command_table.h). COMMAND GETKEYS falls back to it where the key
# specs cannot be applied or their flags vary with the arguments; COMMAND INFO does not show it.
GETKEYS_PROCS = {
    # genericGetKeys(0, 1, 2, 1): numkeys key [key ...]
    "zunion": "kNumKeysAt1", "zinter": "kNumKeysAt1", "zdiff": "kNumKeysAt1",
    "zintercard": "kNumKeysAt1", "sintercard": "kNumKeysAt1", "lmpop": "kNumKeysAt1",
    "zmpop": "kNumKeysAt1",
    # genericGetKeys(0, 2, 3, 1): arg numkeys key [key ...]
    "eval": "kNumKeysAt2", "evalsha": "kNumKeysAt2", "eval_ro": "kNumKeysAt2",
    "evalsha_ro": "kNumKeysAt2", "fcall": "kNumKeysAt2", "fcall_ro": "kNumKeysAt2",
    "blmpop": "kNumKeysAt2", "bzmpop": "kNumKeysAt2",
    # genericGetKeys(1, 2, 3, 1): destination numkeys key [key ...]
    "zunionstore": "kStoreThenNumKeys", "zinterstore": "kStoreThenNumKeys",
    "zdiffstore": "kStoreThenNumKeys",
    "sort": "kSort", "sort_ro": "kSortRo", "migrate": "kMigrate",
    "georadius": "kGeoRadius", "georadiusbymember": "kGeoRadius",
    "xread": "kXread", "xreadgroup": "kXread", "set": "kSet", "bitfield": "kBitfield",
}


# --------------------------------------------------------------------------------------------
# A RESP2 reader that keeps each value's raw bytes.
class Node:
    __slots__ = ("kind", "value", "raw")

    def __init__(self, kind, value, raw):
        self.kind, self.value, self.raw = kind, value, raw

    def py(self):
        """Plain Python value: str/int/None/list."""
        if self.kind == "*":
            return [n.py() for n in self.value]
        return self.value


class Incomplete(Exception):
    pass


def parse(buf, pos):
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise Incomplete()
    kind = chr(buf[pos])
    line = buf[pos + 1:end]
    nxt = end + 2
    if kind in "+-":
        value = line.decode()
    elif kind == ":":
        value = int(line)
    elif kind == "$":
        n = int(line)
        if n < 0:
            value = None
        else:
            if len(buf) < nxt + n + 2:
                raise Incomplete()
            value = buf[nxt:nxt + n].decode()
            nxt += n + 2
    elif kind == "*":
        value = []
        for _ in range(int(line)):
            child, nxt = parse(buf, nxt)
            value.append(child)
    else:
        raise ValueError("bad RESP type byte %r at %d" % (kind, pos))
    return Node(kind, value, bytes(buf[pos:nxt])), nxt


def encode_command(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)

    def call(self, *args):
        self.sock.sendall(encode_command(*args))
        buf = bytearray()
        while True:
            data = self.sock.recv(1 << 20)
            if not data:
                raise RuntimeError("redis-server closed the connection")
            buf += data
            try:
                node, used = parse(buf, 0)
            except Incomplete:
                continue
            if used != len(buf):
                raise RuntimeError("trailing bytes after reply")
            if node.kind == "-":
                raise RuntimeError("redis error: " + node.value)
            return node

    def close(self):
        self.sock.close()


def resp_bulk(text):
    data = text.encode()
    return b"$%d\r\n%s\r\n" % (len(data), data)


def resp_array(items):
    return b"*%d\r\n" % len(items) + b"".join(items)


def synthetic_info(name, arity, subcommands):
    """A COMMAND INFO entry as redis-server 7.0 would encode it (RESP2, ten elements)."""
    return resp_array([
        resp_bulk(name), b":%d\r\n" % arity,
        resp_array([b"+%s\r\n" % f.encode() for f in SYNTHETIC_FLAGS]),
        b":0\r\n", b":0\r\n", b":0\r\n",
        resp_array([b"+%s\r\n" % c.encode() for c in SYNTHETIC_ACL]),
        resp_array([]), resp_array([]), resp_array(subcommands)])


def synthetic_commands():
    """Command objects for SYNTHETIC, with their docs attached."""
    out = []
    for name, (arity, summary, subs) in SYNTHETIC.items():
        sub_entries = [synthetic_info("%s|%s" % (name, s), a, []) for s, (a, _) in sorted(subs.items())]
        node, _ = parse(synthetic_info(name, arity, sub_entries), 0)
        cmd = Command(node)
        texts = {name: summary}
        texts.update({"%s|%s" % (name, s): text for s, (_, text) in subs.items()})

        def docs_map(c):
            pairs = [resp_bulk("summary"), resp_bulk(texts[c.name]),
                     resp_bulk("since"), resp_bulk(SYNTHETIC_SINCE),
                     resp_bulk("group"), resp_bulk("server"),
                     resp_bulk("complexity"), resp_bulk("O(1)")]
            if c.subcommands:
                pairs += [resp_bulk("subcommands"),
                          resp_array([b for s in c.subcommands for b in (resp_bulk(s.name),
                                                                         docs_map(s))])]
            return resp_array(pairs)

        for c in cmd.all():
            c.synthetic = True
            c.docs_resp = resp_bulk(c.name) + docs_map(c)
        out.append(cmd)
    return out


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch_from_server(redis_server):
    tmp = tempfile.mkdtemp(prefix="gen-command-table-")
    port = free_port()
    log = open(os.path.join(tmp, "redis.log"), "wb")
    proc = subprocess.Popen(
        [redis_server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", tmp, "--daemonize", "no"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        client = None
        deadline = time.time() + 10
        while client is None:
            if proc.poll() is not None:
                raise RuntimeError("redis-server exited: see " + log.name)
            try:
                client = Client(port)
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        version = next(line.split(":", 1)[1] for line in
                       client.call("INFO", "server").value.splitlines()
                       if line.startswith("redis_version:"))
        info = client.call("COMMAND", "INFO")
        docs = client.call("COMMAND", "DOCS")
        count = client.call("COMMAND", "COUNT").value
        client.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return version, info, docs, count


# --------------------------------------------------------------------------------------------
# Model.
class Command:
    def __init__(self, node, parent=None):
        v = node.value
        assert len(v) == 10, "COMMAND INFO entry of %d elements" % len(v)
        self.name = v[0].value
        self.arity = v[1].value
        self.redis_flags = [f.value for f in v[2].value]
        self.first, self.last, self.step = v[3].value, v[4].value, v[5].value
        self.acl_categories = [c.value for c in v[6].value]  # "@read", ...
        self.key_specs = [parse_key_spec(kv_pairs(ks.py())) for ks in v[8].value]
        self.parent = parent
        self.subcommands = sorted((Command(s, self) for s in v[9].value), key=lambda c: c.name)
        # Redis nests subcommand entries in its dict's (per-process, seeded) hash order; put them
        # in name order so the output is the same on every run. Each entry keeps its own bytes.
        head = b"*10\r\n" + b"".join(e.raw for e in v[:9])
        assert head + v[9].raw == node.raw
        self.info_resp = head + b"*%d\r\n" % len(self.subcommands) + b"".join(
            s.info_resp for s in self.subcommands)
        self.docs_resp = None
        self.synthetic = False  # one of the proxy's own commands (SYNTHETIC)
        self.cls = None
        self.reason = ""

    def all(self):
        yield self
        for s in self.subcommands:
            yield from s.all()


def kv_pairs(flat):
    return dict(zip(flat[::2], flat[1::2]))


def parse_key_spec(ks):
    """A COMMAND INFO key spec as {"begin", "find", "flags"} (the tuples cxx_keyspec emits)."""
    bs, fk = kv_pairs(ks["begin_search"]), kv_pairs(ks["find_keys"])
    bspec, fspec = kv_pairs(bs["spec"]), kv_pairs(fk["spec"])
    if bs["type"] == "index":
        begin = ("index", bspec["index"])
    elif bs["type"] == "keyword":
        begin = ("keyword", bspec["keyword"], bspec["startfrom"])
    else:
        begin = ("unknown",)
    if fk["type"] == "range":
        find = ("range", fspec["lastkey"], fspec["keystep"], fspec["limit"])
    elif fk["type"] == "keynum":
        find = ("keynum", fspec["keynumidx"], fspec["firstkey"], fspec["keystep"])
    else:
        find = ("unknown",)
    unknown_flags = set(ks["flags"]) - {f for f, _ in KEY_SPEC_FLAG_BITS}
    assert not unknown_flags, "key spec flags %s" % unknown_flags
    return {"begin": begin, "find": find, "flags": ks["flags"]}


def routing_specs(cmd):
    """Key specs used for routing: Redis' own minus 'not_key' ones, or the policy override."""
    if cmd.name in POLICY["keyspec_overrides"]:
        return [dict(s, flags=[]) for s in POLICY["keyspec_overrides"][cmd.name]]
    if cmd.name in POLICY["channel_keys"]:
        return [{"begin": ("index", 1), "find": ("range", 0, 1, 0), "flags": []}]
    # Redis' own key extraction skips not_key specs too (sharded pub/sub channels).
    return [ks for ks in cmd.key_specs if "not_key" not in ks["flags"]]


def no_keys(cmd):
    return not routing_specs(cmd) and cmd.first == 0


def classify(cmd):
    name = cmd.name
    if name in POLICY["local"]:
        return "local", ""
    if name in POLICY["split"]:
        return "split", ""
    if name in POLICY["fanout"]:
        return "fanout", ""
    if name in POLICY["session"]:
        return "session", ""
    if name in POLICY["unsupported"]:
        return "unsupported", POLICY["unsupported"][name]
    if cmd.parent is not None and cmd.parent.name in POLICY["local"]:
        return "unsupported", REASON_LOCAL_CONTAINER
    if name in POLICY["channel_keys"]:
        return "routed", ""
    if "pubsub" in cmd.redis_flags:
        return "unsupported", REASON_PUBSUB
    if "admin" in cmd.redis_flags:
        return "unsupported", REASON_ADMIN
    if no_keys(cmd):
        return "unsupported", REASON_KEYLESS
    return "routed", ""


def flag_names(cmd):
    out = [bit for redis, bit in REDIS_FLAG_BITS if redis in cmd.redis_flags]
    if cmd.cls == "split":
        out.append("kCmdSplit")
    if cmd.cls == "local":
        out.append("kCmdLocal")
    if cmd.cls == "fanout":
        out.append("kCmdFanout")
    if cmd.cls == "session":
        out.append("kCmdSession")
    if cmd.cls == "unsupported":
        out.append("kCmdUnsupported")
    if no_keys(cmd):
        out.append("kCmdNoKeys")
    if cmd.subcommands:
        out.append("kCmdContainer")
    if cmd.synthetic:
        out.append("kCmdProxy")
    if cmd.name in POLICY["admin_only"]:
        out.append("kCmdAdminOnly")
    return out


def docs_entry(name_node, body):
    """("name", its COMMAND DOCS map) as RESP2 bytes: the server's own bytes, but for a container's
    "subcommands" map, whose entries are put in name order (see the module docstring)."""
    pairs = body.value
    out = []
    for i in range(0, len(pairs), 2):
        key, value = pairs[i], pairs[i + 1]
        if key.value == "subcommands":
            subs = sorted(((value.value[j], value.value[j + 1])
                           for j in range(0, len(value.value), 2)), key=lambda p: p[0].value)
            out.append(key.raw + b"*%d\r\n" % len(value.value) +
                       b"".join(docs_entry(n, b) for n, b in subs))
        else:
            out.append(key.raw + value.raw)
    return name_node.raw + b"*%d\r\n" % len(pairs) + b"".join(out)


def attach_docs(commands_by_name, docs_node):
    pairs = docs_node.value
    for i in range(0, len(pairs), 2):
        name, body = pairs[i].value, pairs[i + 1]
        commands_by_name[name].docs_resp = docs_entry(pairs[i], body)
        for j in range(0, len(body.value), 2):
            if body.value[j].value == "subcommands":
                attach_docs(commands_by_name, body.value[j + 1])


# --------------------------------------------------------------------------------------------
# C++ output.
def ident(name):
    return "".join(c if c.isalnum() else "_" for c in name)


def cxx_escape(data):
    """The bytes as C++ string-literal tokens (one per byte), and where RESP lines end."""
    tokens, prev = [], ""
    for b in data:
        c = chr(b)
        if c == "\r":
            tok = "\\r"
        elif c == "\n":
            tok = "\\n"
        elif c in "\"\\":
            tok = "\\" + c
        elif c == "?" and prev == "?":
            tok = "\\?"  # no trigraphs
        elif 0x20 <= b < 0x7F:
            tok = c
        else:
            tok = "\\%03o" % b
        tokens.append(tok)
        prev = c
    return tokens


def cxx_char_array(name, data):
    """constexpr char name[] = "...";, wrapped at RESP line ends (or anywhere in long lines) so
    that no line passes 100 columns."""
    width = 92
    lines, cur = [], ""
    line_tokens = []
    for tok in cxx_escape(data):
        line_tokens.append(tok)
        if tok == "\\n":
            piece = "".join(line_tokens)
            line_tokens = []
            if cur and len(cur) + len(piece) > width:
                lines.append(cur)
                cur = ""
            if len(piece) <= width:
                cur += piece
                continue
            for t in piece_tokens(piece):
                if len(cur) + len(t) > width:
                    lines.append(cur)
                    cur = ""
                cur += t
    cur += "".join(line_tokens)
    if cur:
        lines.append(cur)
    return "constexpr char %s[] =\n%s;" % (name, "\n".join('    "%s"' % l for l in lines))


def piece_tokens(piece):
    """Splits escaped text back into tokens (an escape stays whole)."""
    out, i = [], 0
    while i < len(piece):
        if piece[i] == "\\":
            n = 4 if piece[i + 1].isdigit() else 2
            out.append(piece[i:i + n])
            i += n
        else:
            out.append(piece[i])
            i += 1
    return out


def cxx_keyspec(spec):
    f, g = [], []
    b = spec["begin"]
    if b[0] == "index":
        f += [".begin = KeySpec::Begin::kIndex", ".begin_index = %d" % b[1], ".begin_keyword = {}"]
    elif b[0] == "keyword":
        f += [".begin = KeySpec::Begin::kKeyword", '.begin_keyword = "%s"' % b[1].upper(),
              ".begin_keyword_startfrom = %d" % b[2]]
    else:
        f += [".begin = KeySpec::Begin::kUnknown", ".begin_keyword = {}"]
    k = spec["find"]
    if k[0] == "range":
        g += [".find = KeySpec::Find::kRange", ".range_lastkey = %d" % k[1],
              ".range_keystep = %d" % k[2], ".range_limit = %d" % k[3]]
    elif k[0] == "keynum":
        g += [".find = KeySpec::Find::kKeyNum", ".keynum_index = %d" % k[1],
              ".keynum_firstkey = %d" % k[2], ".keynum_keystep = %d" % k[3]]
    else:
        g += [".find = KeySpec::Find::kUnknown"]
    bits = [bit for name, bit in KEY_SPEC_FLAG_BITS if name in spec["flags"]]
    flags = ".flags = %s" % (" | ".join(bits) or "0")
    second = "     " + ", ".join(g + [flags]) + "},"
    if len(second) > 100:
        second = "     " + ", ".join(g) + ",\n     " + flags + "},"
    return "    {" + ", ".join(f) + ",\n" + second


def docs_view(cmd):
    """A subcommand's COMMAND DOCS entry is a slice of its container's ("subcommands" map)."""
    if cmd.parent is None:
        return "{kDocs_%s, sizeof kDocs_%s - 1}" % (ident(cmd.name), ident(cmd.name))
    at = cmd.parent.docs_resp.find(cmd.docs_resp)
    assert at > 0 and cmd.parent.docs_resp.find(cmd.docs_resp, at + 1) < 0, cmd.name
    return "{kDocs_%s + %d, %d}" % (ident(cmd.parent.name), at, len(cmd.docs_resp))


def redis_specs_name(cmd):
    """The array COMMAND GETKEYS reads: Redis' own key specs, which are the routing ones (and
    share their array) unless POLICY changed those or Redis has not_key specs."""
    if not cmd.key_specs:
        return "{}"
    if cmd.key_specs == routing_specs(cmd):
        return "kKeySpecs_" + ident(cmd.name)
    return "kRedisKeySpecs_" + ident(cmd.name)


def info_view(cmd):
    """A subcommand's COMMAND INFO entry is a slice of its container's (it is nested there)."""
    if cmd.parent is None:
        return "{kInfo_%s, sizeof kInfo_%s - 1}" % (ident(cmd.name), ident(cmd.name))
    at = cmd.parent.info_resp.find(cmd.info_resp)
    assert at > 0 and cmd.parent.info_resp.find(cmd.info_resp, at + 1) < 0, cmd.name
    return "{kInfo_%s + %d, %d}" % (ident(cmd.parent.name), at, len(cmd.info_resp))


def cxx_command(cmd):
    """One CommandInfo initializer, its fields wrapped at 100 columns."""
    fields = ['.name = "%s"' % cmd.name, ".arity = %d" % cmd.arity,
              ".flags = %s" % (" | ".join(flag_names(cmd)) or "0"),
              ".first_key = %d" % cmd.first, ".last_key = %d" % cmd.last,
              ".key_step = %d" % cmd.step]
    if cmd.cls == "split":
        rule, per_key = POLICY["split"][cmd.name]
        fields += [".merge = MergeRule::%s" % rule, ".args_per_key = %d" % per_key]
    if cmd.cls == "fanout":
        fields.append(".merge = MergeRule::%s" % POLICY["fanout"][cmd.name])
    # Every member without a default initializer is named (g++ -Wmissing-field-initializers).
    fields.append(".key_specs = " + ("kKeySpecs_" + ident(cmd.name) if routing_specs(cmd) else "{}"))
    fields.append(".subcommands = " +
                  ("kSubcommands_" + ident(cmd.name) if cmd.subcommands else "{}"))
    fields.append(".info_resp = %s" % info_view(cmd))
    fields.append(".docs_resp = %s" % docs_view(cmd))
    fields.append(".redis_key_specs = " + redis_specs_name(cmd))
    fields.append(".keys_proc = KeysProc::%s" % GETKEYS_PROCS.get(cmd.name, "kNone"))
    fields.append('.acl_categories = "%s"' % " ".join(c.lstrip("@") for c in cmd.acl_categories))
    if cmd.name in POLICY["handlers"]:
        fields.append(".handler = Handler::%s" % POLICY["handlers"][cmd.name])
    lines, cur = [], "    {"
    for i, f in enumerate(fields):
        f += "}," if i == len(fields) - 1 else ","
        if len(cur) + 1 + len(f) > 100 and cur.strip() != "{":
            lines.append(cur)
            cur = "     " + f
        else:
            cur += ("" if cur.endswith("{") else " ") + f
    lines.append(cur)
    return "\n".join(lines)


def write_inc(path, version, top):
    everything = [c for t in top for c in t.all()]
    idents = [ident(c.name) for c in everything]
    assert len(set(idents)) == len(idents), "identifier clash"
    o = []
    o.append("// Generated by tools/gen-command-table.py from redis-server %s: do not edit." % version)
    o.append("// Regenerate with: /usr/bin/python3 tools/gen-command-table.py")
    o.append("// Included once, by command_table.cc, inside namespace sp::resp (unnamed namespace).")
    o.append("// Defines kCommands (top-level commands sorted by name) and the arrays it points at.")
    o.append("// clang-format off")
    o.append("")
    o.append('constexpr std::string_view kRedisVersion = "%s";' % version)
    o.append("constexpr size_t kTopLevelCount = %d;" % len(top))
    o.append("constexpr size_t kSubcommandCount = %d;" % (len(everything) - len(top)))
    o.append("")
    o.append("// COMMAND INFO entries of the top-level commands (subcommands are slices of these).")
    for c in top:
        o.append(cxx_char_array("kInfo_" + ident(c.name), c.info_resp))
    o.append("")
    o.append("// COMMAND DOCS entries (name + map) of the top-level commands (subcommands: slices).")
    for c in top:
        o.append(cxx_char_array("kDocs_" + ident(c.name), c.docs_resp))
    o.append("")
    o.append("// Routing key specs (Redis' own without not_key specs, or POLICY overrides), and")
    o.append("// Redis' own where they differ (COMMAND GETKEYS).")
    for c in everything:
        specs = routing_specs(c)
        if specs:
            o.append("constexpr KeySpec kKeySpecs_%s[] = {" % ident(c.name))
            o += [cxx_keyspec(s) for s in specs]
            o.append("};")
        if redis_specs_name(c).startswith("kRedisKeySpecs_"):
            o.append("constexpr KeySpec kRedisKeySpecs_%s[] = {" % ident(c.name))
            o += [cxx_keyspec(s) for s in c.key_specs]
            o.append("};")
    o.append("")

    def emit_array(name, cmds):
        for c in cmds:
            if c.subcommands:
                emit_array("kSubcommands_" + ident(c.name), c.subcommands)
        o.append("constexpr CommandInfo %s[] = {" % name)
        o.extend(cxx_command(c) for c in cmds)
        o.append("};")
        o.append("")

    emit_array("kCommands", top)
    o.append("// clang-format on")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


# --------------------------------------------------------------------------------------------
# docs/commands.md
def write_docs(path, version, top):
    entries = [c for t in top for c in t.all() if not c.subcommands]
    by = {k: [c for c in entries if c.cls == k] for k in CLASSES}
    upper = lambda c: c.name.upper().replace("|", " ")
    o = ["# Commands",
         "",
         "Generated by `tools/gen-command-table.py` from redis-server %s's `COMMAND INFO`, with the"
         % version,
         "proxy's policy (the `POLICY` dict at the top of the script) overlaid. Do not edit by hand.",
         "",
         "| class | commands and subcommands (containers not counted) |",
         "|---|---|"]
    for k in CLASSES:
        o.append("| %s | %d |" % (k, len(by[k])))
    o += ["",
          "A container (CLIENT, OBJECT, XINFO, ...) takes the class of its subcommand; an unknown",
          "subcommand of any container is answered as redis-server answers it (`unknown",
          "subcommand 'x'. Try OBJECT HELP.`).",
          "",
          "## Routed to the shard that owns the key",
          "",
          "Commands with several keys are forwarded whole when all keys hash to one slot, refused",
          "with `-CROSSSLOT` otherwise. Blocking commands (BLPOP, BRPOP, BLMOVE, BLMPOP, BZPOPMIN,",
          "BZPOPMAX, BZMPOP, BRPOPLPUSH, XREAD/XREADGROUP with `BLOCK`) are served on a dedicated",
          "connection to the shard, never on the shared pipeline; PUBLISH and SPUBLISH go to the",
          "shard of their channel's slot. EVAL/EVALSHA/FCALL (and their `_RO` forms) go to the",
          "shard of their declared keys (any shard when they declare none).",
          ""]
    groups = {}
    for c in by["routed"]:
        groups.setdefault(docs_group(c), []).append(c)
    for g in sorted(groups):
        o.append("- **%s**: %s" % (g, ", ".join("`%s`" % upper(c) for c in groups[g])))
    o += ["", "## Split per shard and merged", "", "| command | merge |", "|---|---|"]
    merge_text = {"kArrayInKeyOrder": "array, in the order of the request's keys",
                  "kSumIntegers": "sum of the integer replies",
                  "kAllOk": "`+OK` when every shard answered `+OK`, else the first error"}
    for c in by["split"]:
        o.append("| `%s` | %s |" % (upper(c), merge_text[POLICY["split"][c.name][0]]))
    o += ["", "## Fanned out to every shard and merged", "", "| command | merge |", "|---|---|"]
    fanout_text = {
        "kSumIntegers": "sum of the integer replies",
        "kConcatArrays": "the shards' arrays concatenated",
        "kUnionArrays": "the shards' arrays concatenated, duplicates dropped",
        "kRandomNonNull": "a key from a shard picked at random among those that have one",
        "kAllOk": "`+OK` when every shard answered `+OK`, else the first error",
        "kAllEqual": "the shards' common reply (an error when they differ)",
        "kMinInteger": "the smallest integer reply",
        "kAndIntegers": "element-wise: 1 only where every shard answered 1",
        "kSumPairs": "name/count pairs, the counts summed over the shards",
        "kFirstShard": "sent to the first shard only; its reply",
        "kAnyOk": "sent on a fresh connection to every shard (the shared ones wait behind a "
                  "running script); `+OK` when any shard killed one, `-NOTBUSY` when none ran "
                  "one, else the first other error",
        "kLatestPerEvent": "one entry per event: the latest of the shards' (the newest timestamp "
                           "and its latency), with the largest maximum",
        "kScanCursor": "sent to the shard the cursor names; the cursor encodes the shard index in "
                       "its low 14 bits, so a full SCAN visits every shard in turn",
    }
    for c in by["fanout"]:
        o.append("| `%s` | %s |" % (upper(c), fanout_text[POLICY["fanout"][c.name]]))
    o += ["",
          "`CONFIG SET` is refused unless `allow_config_set: true`; then the proxy's own "
          "parameters",
          "(`timeout`, `tcp-keepalive`, `maxclients`, `slowlog-*`) are applied to the proxy, those that",
          "would cut it off its shards (`requirepass`, `port`, `bind`, `replicaof`, `dir`, `cluster-*`,",
          "...; `maxmemory` below a shard's usage) are refused, and the rest is sent to every shard.",
          "`CONFIG GET`, answered by the proxy in the table, also asks every shard: each parameter once,",
          "the first shard's value when they differ, the proxy's own parameters from the proxy",
          "([docs/operations.md](operations.md#config-get-and-config-set)). `FLUSHALL`, `FLUSHDB` and",
          "`KEYS` (and `CONFIG SET`) need an admin user when client authentication is configured, and any",
          "command can be disabled with `deny_commands`.",
          "", "## Served with the connection's state", "",
          "Transactions (MULTI/EXEC/DISCARD/WATCH/UNWATCH, on a connection of the transaction's",
          "shard), pub/sub (SUBSCRIBE/PSUBSCRIBE/SSUBSCRIBE and their UNSUBSCRIBE forms, on",
          "subscriber connections of the channels' shards; patterns on every shard), AUTH, HELLO",
          "(`HELLO 3` switches the connection to RESP3, `HELLO 2` and RESET back; RESP3 clients' "
          "requests go",
          "on shard connections that speak RESP3, and their pub/sub messages arrive as pushes) and "
          "RESET.",
          "",
          "Inside MULTI, the subscribe and unsubscribe commands are refused (`Command not allowed",
          "inside a transaction`, and EXEC then answers `-EXECABORT`). redis-server 7.0 queues them,",
          "but its EXEC reply then counts one element per command and sends one confirmation per",
          "channel, so the replies that follow are misaligned; a proxy must never misalign replies.",
          "", ", ".join("`%s`" % upper(c) for c in by["session"]), "",
          "## Answered by the proxy", "",
          ", ".join("`%s`" % upper(c) for c in by["local"]), "",
          "### COMMAND", "",
          "`COMMAND`, `COMMAND COUNT`, `LIST [FILTERBY MODULE|ACLCAT|PATTERN]`, `INFO`, `DOCS`,",
          "`GETKEYS`, `GETKEYSANDFLAGS` and `HELP` answer from this table with redis-server %s's"
          % version,
          "bytes (its full `COMMAND DOCS`, arguments and history included; its errors and syntax",
          "errors), in RESP2 and RESP3, for every Redis command, the refused ones included. They",
          "differ from redis-server in two ways only:", "",
          "- **Order.** redis-server lists the commands, and a container's subcommands (the",
          "  subcommand entries of `COMMAND INFO config`, the `subcommands` map of `COMMAND DOCS",
          "  config`), in the order of its command dictionary, whose hash seed is random in every",
          "  process: two redis-servers of the same build disagree. The proxy lists them by name;",
          "  each entry's bytes are redis-server's.",
          "- **PROXY.** Whole lists (`COMMAND`, `COMMAND COUNT`, `COMMAND LIST`, and `COMMAND INFO`",
          "  / `COMMAND DOCS` without names) hold redis-server's commands only, so that client",
          "  libraries and redis-cli see the server they expect. Named explicitly (`COMMAND INFO",
          "  proxy`, `COMMAND DOCS proxy|reload`, `COMMAND GETKEYS PROXY SHARDS`), the proxy's own",
          "  command is described like any other, where redis-server answers as for an unknown",
          "  command.", "",
          "## Unsupported", "", "Refused with `-ERR command '...' is not supported by shardproxy`.",
          "", "| reason | commands |", "|---|---|"]
    reasons = {}
    for c in by["unsupported"]:
        reasons.setdefault(c.reason, []).append(c)
    for r in sorted(reasons):
        o.append("| %s | %s |" % (r, ", ".join("`%s`" % upper(c) for c in reasons[r])))
    o += PLACEMENT_SECTION
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


# What the pool's placement (config `placement`) changes; the same for every command class.
PLACEMENT_SECTION = [
    "", "## Per placement", "",
    "The classes above hold for every placement (`placement.kind`); what \"the shard that owns",
    "the key\" and \"the same slot\" mean depends on it. [docs/migrating.md](migrating.md) has",
    "the configurations.", "",
    "| | `cluster_slots` (default) | `codis` | `twemproxy` |",
    "|---|---|---|---|",
    "| a key's unit | CRC16(key) % 16384, `{tag}` when non-empty | CRC32(key) % 1024, `{tag}` even"
    " when empty | the pool's server: `hash` (12 functions) with `ketama`, `modula` or `random`,"
    " `hash_tag` when non-empty |",
    "| multi-key commands (not split), MULTI/EXEC, WATCH, scripts, SSUBSCRIBE | keys in one"
    " slot | keys in one Codis slot | keys on one shard |",
    "| keys in several units | `-CROSSSLOT Keys in request don't hash to the same slot` | the"
    " same | `-CROSSSLOT Keys in request don't hash to the same shard` |",
    "| split commands (MGET, MSET, DEL, UNLINK, EXISTS, TOUCH) | one fragment per shard | the"
    " same | the same |",
    "| fan-out commands (SCAN, KEYS, DBSIZE, FLUSHALL, ...) | every shard | the same | the same |",
    "| `PROXY SLOTS` | the slot ranges | the Codis slot ranges (0..1023) | empty (no slots) |",
    "| `backend.mode cluster` | yes | no | no |",
    "",
    "With `distribution: random` every key of every request goes to any shard, as in twemproxy:",
    "only for pools whose shards hold the same data, and without pub/sub, transactions or",
    "multi-key commands (their keys would rarely meet on one shard).",
]


def docs_group(cmd):
    pairs = parse(cmd.docs_resp, 0)[1]
    node, _ = parse(cmd.docs_resp, pairs)
    d = kv_pairs(node.py())
    return d.get("group", "other")


# --------------------------------------------------------------------------------------------
def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "/usr/bin/redis-server")
    ap.add_argument("--out-dir", default=os.path.dirname(here), help="repository root")
    args = ap.parse_args()

    version, info, docs, count = fetch_from_server(args.redis_server)
    top = sorted((Command(n) for n in info.value), key=lambda c: c.name)
    if len(top) != count:
        sys.exit("COMMAND INFO gave %d commands, COMMAND COUNT %d" % (len(top), count))
    by_name = {c.name: c for t in top for c in t.all()}
    attach_docs(by_name, docs)
    for cmd in synthetic_commands():
        if cmd.name in by_name:
            sys.exit("SYNTHETIC '%s' clashes with a redis-server %s command" % (cmd.name, version))
        top.append(cmd)
        by_name.update((c.name, c) for c in cmd.all())
    top.sort(key=lambda c: c.name)
    missing = [n for n, c in by_name.items() if c.docs_resp is None]
    if missing:
        sys.exit("no COMMAND DOCS for: " + ", ".join(missing))
    for name in list(POLICY["local"]) + list(POLICY["split"]) + list(POLICY["fanout"]) + \
            list(POLICY["session"]) + list(POLICY["channel_keys"]) + \
            list(POLICY["unsupported"]) + list(POLICY["keyspec_overrides"]) + \
            list(POLICY["handlers"]) + list(POLICY["admin_only"]) + list(GETKEYS_PROCS):
        if name not in by_name:
            sys.exit("POLICY names '%s', which redis-server %s does not know" % (name, version))

    for name, specs in POLICY["keyspec_overrides"].items():
        if len(specs) != len(by_name[name].key_specs):
            sys.exit("POLICY overrides %d key specs of '%s', redis-server has %d"
                     % (len(specs), name, len(by_name[name].key_specs)))

    counts = {}
    for c in by_name.values():
        c.cls, c.reason = classify(c)
        counts[c.cls] = counts.get(c.cls, 0) + 1
    unhandled = sorted(c.name for c in by_name.values()
                       if c.cls in ("local", "session") and not c.subcommands and
                       c.name not in POLICY["handlers"])
    if unhandled:
        sys.exit("POLICY gives no handler to the local or session command(s): " +
                 ", ".join(unhandled))

    inc = os.path.join(args.out_dir, "proxy/src/resp/command_table_data.inc")
    md = os.path.join(args.out_dir, "docs/commands.md")
    write_inc(inc, version, top)
    os.makedirs(os.path.dirname(md), exist_ok=True)
    write_docs(md, version, top)

    print("redis-server %s: %d commands, %d subcommands" % (version, len(top), len(by_name) - len(top)))
    for k in CLASSES:
        print("  %-12s %3d" % (k, counts.get(k, 0)))
    reasons = {}
    for c in by_name.values():
        if c.cls == "unsupported":
            reasons[c.reason] = reasons.get(c.reason, 0) + 1
    for r in sorted(reasons):
        print("    %-26s %3d" % (r, reasons[r]))
    print("wrote %s\nwrote %s" % (os.path.relpath(inc, args.out_dir), os.path.relpath(md, args.out_dir)))


if __name__ == "__main__":
    main()
