"""How a proxy reply is judged against the reference's: byte for byte after the normalisation
below, then the allow-list of deliberate differences, then (fault mode only) the
shard-unavailable tolerance. All three live here and nowhere else."""

import os
import re

import keyspace as ks
from resp import split

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Commands the proxy splits over shards and merges (docs/commands.md); their replies must match
# redis-server's exactly, keys across slots included.
SPLIT_COMMANDS = {b"MGET", b"MSET", b"DEL", b"EXISTS", b"TOUCH", b"UNLINK"}

CROSSSLOT = b"-CROSSSLOT Keys in request don't hash to the same slot\r\n"
EXECABORT = b"-EXECABORT Transaction discarded because of previous errors.\r\n"

# ---- normalisation: the only places where equal replies may differ in bytes ----

# A relative expiry depends on when each server ran the command: compare only its class
# (-2 no key, -1 no expiry, or "some time left"). Absolute expiry times set from a relative
# one (EXPIRE then EXPIRETIME) can also land on different seconds.
_TIME_LEFT = {b"TTL", b"PTTL", b"EXPIRETIME", b"PEXPIRETIME"}
# Redis 7.0 keeps a set of non-integer members in a hash table whose order depends on the
# process's random hash seed, and KEYS lists each shard's keys in turn: compare as sorted.
_UNORDERED = {b"SMEMBERS", b"SUNION", b"SINTER", b"SDIFF", b"KEYS"}


def normalise_frames(argv, frames):
    """UNSUBSCRIBE and PUNSUBSCRIBE without arguments leave the channels in the order of the
    server's hash table (random per process): compare their names sorted, the counts as
    they came. The frames are arrays (RESP2) or pushes (RESP3) of [kind, channel, count]."""
    name = argv[0].upper() if argv else b""
    if name not in (b"UNSUBSCRIBE", b"PUNSUBSCRIBE") or len(argv) > 1 or len(frames) < 2:
        return frames
    parts = [split(f) for f in frames]
    if any(p is None or len(p[1]) != 3 for p in parts):
        return frames
    names = sorted(items[1] for _, items in parts)
    return [head + items[0] + n + items[2] for (head, items), n in zip(parts, names)]


def _sorted_elements(reply):
    """An array or set with its elements (exact bytes each) in sorted order."""
    parts = split(reply)
    if parts is None:
        return reply
    head, items = parts
    return head + b"".join(sorted(items))


def _hello(reply):
    """HELLO's map (RESP3) or flat array (RESP2) with the connection id left out: the id
    numbers connections per process. Everything else (server, version, proto, mode, role,
    modules, and the reply's type) is compared as it came."""
    parts = split(reply)
    if parts is None or len(parts[1]) % 2:
        return reply
    head, items = parts
    for i in range(0, len(items), 2):
        if items[i] in (b"$2\r\nid\r\n", b"+id\r\n"):
            items[i + 1] = b":<id>\r\n"
    return head + b"".join(items)


def normalise(argv, reply, queued=None, restored=()):
    """The reply with timing and ordering noise removed; `queued` holds the argvs a
    transaction queued, when argv is its EXEC; `restored` the keys copied by DUMP/RESTORE.
    Works on the exact bytes of elements, so that RESP2 and RESP3 replies keep every type."""
    name = argv[0].upper() if argv else b""
    # DUMP/RESTORE (how the test copies a key to the proxy after an allowed refusal, see
    # runner.resync) keeps a value, not its encoding: a restored string reads "embstr" where
    # the reference's, grown by APPEND, reads "raw"; a set that shrank back reads "intset".
    if name == b"OBJECT" and argv[1:2] and argv[1].upper() == b"ENCODING" and \
            argv[2:3] and argv[2] in restored and reply.startswith(b"$") and reply != b"$-1\r\n":
        return b"$<encoding of a restored key>\r\n"
    if name in _TIME_LEFT and reply.startswith(b":"):
        value = int(reply[1:-2])
        return b":<time left>\r\n" if value >= 0 else reply
    if name in _UNORDERED:
        return _sorted_elements(reply)
    # COMMAND LIST follows redis-server's command dictionary, whose order is its hash order.
    if name == b"COMMAND" and argv[1:2] and argv[1].upper() == b"LIST":
        return _sorted_elements(reply)
    if name == b"HELLO":
        return _hello(reply)
    if name == b"EXEC" and queued:
        parts = split(reply)
        if parts is not None and len(parts[1]) == len(queued):
            head, items = parts
            return head + b"".join(normalise(q, item, restored=restored)
                                   for q, item in zip(queued, items))
    return reply


def normalise_messages(messages):
    """Pub/sub messages that one step delivered to one connection. Messages of different
    channels come from different shards through the proxy, and a channel message and a
    pattern message of one PUBLISH from different subscriber connections, so their relative
    order is not defined there: compare them as a sorted list."""
    return sorted(messages)


# ---- the allow-list: differences that are the proxy's documented behaviour ----

def _unsupported_commands():
    """Command names (lower case, "object help" for a subcommand) that docs/commands.md lists
    as refused by the proxy."""
    names = set()
    path = os.path.join(REPO, "docs", "commands.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    section = text.split("## Unsupported", 1)[1]
    for line in section.splitlines():
        if line.startswith("|") and "`" in line:
            names.update(n.lower() for n in re.findall(r"`([A-Z][A-Z_ -]*)`", line))
    return names


UNSUPPORTED = _unsupported_commands()
_UNSUPPORTED_REPLY = re.compile(
    rb"^-ERR command '([a-z_| -]+)' is not supported by shardproxy\r\n$")


class Context:
    """What a judgement may need beyond the request: the connection's transaction."""

    def __init__(self, tx_pinned=(), tx_refused=False):
        self.tx_pinned = list(tx_pinned)  # the key whose slot the proxy pinned the transaction
        self.tx_refused = tx_refused  # the proxy refused a command of that transaction


def _crossslot(cmd, ref, proxy, ctx):
    # Inside a transaction, the slot is the one its first key (or WATCH) pinned.
    keys = cmd.keys + ctx.tx_pinned if ref == b"+QUEUED\r\n" or cmd.name == b"WATCH" else cmd.keys
    if cmd.name in SPLIT_COMMANDS and ref != b"+QUEUED\r\n":
        return False
    return proxy == CROSSSLOT and not ks.same_slot(keys)


def _refused_in_transaction(cmd, ref, proxy, ctx):
    return (ref == b"+QUEUED\r\n" and cmd.name in (b"DBSIZE", b"KEYS", b"FLUSHALL")
            and proxy.startswith(b"-ERR command '") and b"cannot be part of a transaction" in proxy)


def _exec_after_refusal(cmd, ref, proxy, ctx):
    return cmd.name == b"EXEC" and ctx.tx_refused and proxy == EXECABORT


def _keyless_script(cmd, ref, proxy, ctx):
    return (cmd.name in (b"EVAL", b"EVALSHA", b"FCALL", b"EVAL_RO", b"EVALSHA_RO", b"FCALL_RO")
            and len(cmd.argv) > 2 and cmd.argv[2] == b"0"
            and proxy.startswith(b"-ERR a script or function called with no keys"))


def _unsupported(cmd, ref, proxy, ctx):
    match = _UNSUPPORTED_REPLY.match(proxy)
    if not match:
        return False
    return match.group(1).decode() in UNSUPPORTED


# (predicate, reason). A predicate sees the request (generator.Cmd), both replies (exact
# bytes, after normalisation) and the Context. Keep this list short and documented.
ALLOWED = [
    (_crossslot, "keys of a non-split command span slots: the proxy answers -CROSSSLOT, as "
                 "Redis Cluster does (README, Commands: Routed by key)"),
    (_refused_in_transaction, "a command that spans every shard is refused inside MULTI "
                              "(README, Commands: Transactions)"),
    (_exec_after_refusal, "EXEC after the proxy refused a command of the transaction answers "
                          "-EXECABORT (README, Commands: Transactions)"),
    (_keyless_script, "a script call with no keys that may reach the keyspace (EVAL with "
                      "redis.call, every EVALSHA and FCALL) is refused (README: keyless_scripts)"),
    (_unsupported, "a command docs/commands.md lists as unsupported is refused with 'not "
                   "supported by shardproxy'"),
]


def allowed(cmd, ref, proxy, ctx):
    """The reason a difference is allowed, or None."""
    for predicate, reason in ALLOWED:
        if predicate(cmd, ref, proxy, ctx):
            return reason
    return None


def changes_state(cmd, reason):
    """Whether an allowed difference leaves the reference's keys different from the proxy's:
    the reference ran a request that the proxy refused. Read-only refusals change nothing."""
    return reason is not None and (cmd.name == b"EXEC" or cmd.name not in _READS)


# The read-only commands the generator sends across slots (generator.keys_for(write=False)).
_READS = {b"SINTER", b"SUNION", b"SDIFF", b"SINTERCARD", b"ZUNION", b"ZINTER", b"ZDIFF", b"LCS",
          b"XREAD"}


# ---- fault mode: the shard-unavailable error and what carries it ----

_UNAVAILABLE = re.compile(
    rb"^-(ERR|EXECABORT Transaction discarded:|LOADING) .*shard \S+ \([^)]*\) unavailable: .*\r\n$")


def unavailable(reply):
    """Whether the reply is the proxy's error for a shard that is down (or its EXECABORT and
    LOADING forms), which fault mode accepts in place of any reply. A restarted shard may
    answer -LOADING while it starts; the proxy passes that on as it is."""
    return bool(_UNAVAILABLE.match(reply)) or reply.startswith(b"-LOADING ")
