"""Runs one command stream against both targets, the reference redis-server and shardproxy,
and judges every reply (compare.py). A Side is one target's client connections; the Runner
sends each Unit to the reference first and then to the proxy, reads back exactly the replies
it expects, reads the pub/sub messages the unit's PUBLISHes must deliver, and compares.

A stream runs in RESP2 or RESP3: in RESP3 each client connection of both sides starts with
HELLO 3 (the admin connection, for set-up and resynchronisation, stays RESP2). A RESP3
connection gets its SUBSCRIBE confirmations and its messages as pushes, out of band: the
confirmations are read as the reply of the command that asked for them, the messages with the
step that published them, and any push left over after a step is compared as well.

One-at-a-time mode waits for each reply before the next command; pipelined mode writes a
connection's whole batch at once and then reads all its replies. Either way both targets
see the same order of operations per connection, and the connections take turns in the order
the generator chose, so both keyspaces go through the same states.
"""

import itertools
import time
from dataclasses import dataclass, field

import compare
from generator import Cmd, messages_expected
from resp import ConnectionClosed, Connection, ReplyTimeout, decode, encode, push_kind

TIMEOUT = 10.0        # seconds for one reply (times the sanitizer scale)
_SUB_COMMANDS = {b"SUBSCRIBE", b"UNSUBSCRIBE", b"PSUBSCRIBE", b"PUNSUBSCRIBE"}
_CONFIRMATIONS = {b"subscribe", b"unsubscribe", b"psubscribe", b"punsubscribe", b"ssubscribe",
                  b"sunsubscribe"}
_MESSAGES = {b"message", b"pmessage", b"smessage"}


def is_confirmation(frame):
    return push_kind(frame) in _CONFIRMATIONS


def is_message(frame):
    return push_kind(frame) in _MESSAGES


class ProtocolRefused(Exception):
    """A side did not switch a connection to the stream's protocol (HELLO 3 refused)."""

    def __init__(self, side, reply):
        super().__init__("%s answered HELLO 3 with %s: it does not speak RESP3" % (
            side, reply.decode("latin-1").strip()[:200]))
        self.side = side
        self.reply = reply


class Tracker:
    """How many reply frames the next command of one connection brings (SUBSCRIBE and its
    kin answer once per channel), and whether they come as pushes (RESP3). Follows the
    replies actually received, so each target's tracker matches that target's connection
    even when the two disagree."""

    def __init__(self, proto=2):
        self.proto = proto          # HELLO switches it; RESET goes back to RESP2
        self.multi = False
        self.channels = set()
        self.patterns = set()

    @property
    def subscribed(self):
        return bool(self.channels or self.patterns)

    def frames(self, argv):
        name = argv[0].upper()
        if self.multi or name not in _SUB_COMMANDS:
            return 1
        if len(argv) > 1:
            return len(argv) - 1
        current = self.channels if name == b"UNSUBSCRIBE" else self.patterns
        return max(1, len(current)) if name in (b"UNSUBSCRIBE", b"PUNSUBSCRIBE") else 1

    def pushed(self, argv):
        """Whether the command's confirmations come as pushes (RESP3, outside MULTI)."""
        return self.proto == 3 and not self.multi and argv[0].upper() in _SUB_COMMANDS

    def snapshot(self):
        """(protocol, channels, patterns) now: what a PUBLISH of this connection meets."""
        return self.proto, set(self.channels), set(self.patterns)

    def observe(self, argv, frames):
        name = argv[0].upper()
        first = frames[0] if frames else b""
        if name == b"RESET" and first == b"+RESET\r\n":
            self.__init__(proto=2)
        elif name == b"HELLO" and not self.multi and first[:1] in (b"%", b"*"):
            if len(argv) > 1:
                self.proto = int(argv[1])
        elif name == b"MULTI" and first == b"+OK\r\n":
            self.multi = True
        elif name in (b"EXEC", b"DISCARD") and self.multi:
            self.multi = False
        elif name in _SUB_COMMANDS and not self.multi:
            for frame in frames:
                if not frame.startswith((b"*3\r\n", b">3\r\n")):
                    continue
                kind, channel, _ = decode(frame)
                target = self.patterns if kind.startswith(b"p") else self.channels
                if kind.endswith(b"unsubscribe"):
                    target.discard(channel)
                elif kind.endswith(b"subscribe"):
                    target.add(channel)


class Side:
    """One target: its client connections (in the stream's protocol), their trackers, and an
    admin connection (RESP2)."""

    def __init__(self, name, port, count, scale, protocol):
        self.name = name
        self.port = port
        self.scale = scale
        self.protocol = protocol
        self.conns = []
        self.admin = Connection(port, TIMEOUT * scale)
        try:
            self.conns = [self._connect() for _ in range(count)]
        except BaseException:
            self.close()
            raise
        self.trackers = [Tracker(protocol) for _ in range(count)]

    def _connect(self):
        """A client connection in the stream's protocol. Its HELLO 3 reply is not compared
        (the stream's own HELLOs are, compare.normalise); it must be a map."""
        conn = Connection(self.port, TIMEOUT * self.scale)
        if self.protocol == 3:
            try:
                reply = conn.call([b"HELLO", b"3"], TIMEOUT * self.scale)
            except BaseException:
                conn.close()
                raise
            if not reply.startswith(b"%"):
                conn.close()
                raise ProtocolRefused(self.name, reply)
        return conn

    def reconnect(self, index):
        self.conns[index].close()
        self.conns[index] = self._connect()
        self.trackers[index] = Tracker(self.protocol)

    def close(self):
        for conn in self.conns + [self.admin]:
            conn.close()


@dataclass
class Result:
    """One (command, connection) outcome on both sides."""
    conn: int
    cmd: Cmd
    ref: list            # reply frames (bytes) from the reference
    proxy: list          # reply frames from the proxy
    in_multi: bool = False   # the reference's connection is in MULTI after this command (a
                             # pipelined batch is read whole before it is judged)
    subs: dict = None        # a PUBLISH: side name -> Tracker.snapshot() of the publishing
                             # connection when it ran (RESP3 delivers to a subscribed publisher)


@dataclass
class Difference:
    unit_index: int
    conn: int
    what: str            # the request, or "messages on connection N after ..."
    ref: list
    proxy: list
    cmd: Cmd = None


@dataclass
class TxState:
    """The open transaction of one connection, as the reference sees it."""
    queued: list = field(default_factory=list)   # argvs the reference answered +QUEUED
    keys: list = field(default_factory=list)     # every key the transaction named
    pinned: list = field(default_factory=list)   # the first key the proxy accepted (WATCH or
                                                 # queued command): the proxy's pinned slot
    refused: bool = False                        # the proxy refused one of its commands
    tainted: bool = False                        # fault mode: one of its replies was tolerated
    watch_failed: bool = False                   # fault mode: its WATCH was tolerated


@dataclass
class Stats:
    compared: int = 0
    allowed: int = 0
    tolerated: int = 0
    skipped: int = 0
    allowed_reasons: dict = field(default_factory=dict)


class Runner:
    def __init__(self, servers, conns, scale, log=print):
        self.servers = servers
        self.count = conns
        self.scale = scale
        self.log = log
        self.ref = None
        self.proxy = None
        self.fault_mode = False
        self.downtime = False
        self.dirty = set()          # keys whose proxy copy may differ (fault mode)
        self.restored = set()       # keys resync() copied with RESTORE
        self.loads = []             # SCRIPT LOAD / FUNCTION LOAD requests that succeeded
        self.tx = []
        self.protocol = 2
        self.stats = Stats()

    # ---- set-up ----

    def open(self, protocol, fault_mode=False):
        """Fresh connections in `protocol` (2 or 3) and empty keyspaces (FLUSHALL, SCRIPT
        FLUSH, FUNCTION FLUSH). ProtocolRefused when a side refuses HELLO 3."""
        self.close()
        self.protocol = protocol
        self.fault_mode = fault_mode
        self.downtime = False
        self.dirty = set()
        self.restored = set()
        self.loads = []
        self.ref = Side("reference", self.servers.ref_port, self.count, self.scale, protocol)
        self.proxy = Side("proxy", self.servers.proxy_port, self.count, self.scale, protocol)
        self.tx = [TxState() for _ in range(self.count)]
        for side in (self.ref, self.proxy):
            for argv in ([b"FLUSHALL"], [b"SCRIPT", b"FLUSH"], [b"FUNCTION", b"FLUSH"]):
                reply = side.admin.call(argv, TIMEOUT * self.scale)
                if reply != b"+OK\r\n":
                    raise RuntimeError("%s: %s answered %r" % (side.name, b" ".join(argv), reply))

    def close(self):
        for side in (self.ref, self.proxy):
            if side is not None:
                side.close()
        self.ref = self.proxy = None

    def recover(self):
        """After a failed case: drop the connections, restart a proxy that exited and a shard
        that fault mode left down, and wait until the proxy serves every shard again."""
        self.close()
        if not self.servers.proxy_alive():
            self.servers.restart_proxy()
        if self.servers.restart_dead_shards():
            conn = Connection(self.servers.proxy_port, TIMEOUT * self.scale)
            try:
                deadline = time.monotonic() + 30 * self.scale
                while conn.call([b"DBSIZE"], TIMEOUT * self.scale).startswith(b"-"):
                    if time.monotonic() > deadline:
                        raise RuntimeError("the proxy did not reach the restarted shards")
                    time.sleep(0.05)
            finally:
                conn.close()

    def reset_tx(self, index):
        self.tx[index] = TxState()

    # ---- running ----

    def run(self, units, trace=None, stop=None):
        """Run units in order; the first Difference, or None. Executed units go to `trace`.
        `stop(commands_done)` is asked before each unit and may act (fault mode) or end it."""
        done = 0
        units = iter(units)
        for index in itertools.count():
            # Asked before the next unit is generated: a fault changes what may come next.
            if stop is not None and stop(done):
                break
            unit = next(units, None)
            if unit is None:
                break
            if trace is not None:
                trace.append(unit)
            if self.dirty and not self.downtime:
                self.resync(sorted(self.dirty))
            diff = self.run_unit(index, unit)
            done += len(unit.cmds)
            if diff is not None:
                return diff
        return None

    def run_unit(self, index, unit):
        results = self._execute(unit)
        resync = []
        for result in results:
            diff = self._judge(index, result, resync)
            if diff is not None:
                return diff
        diff = self._messages(index, unit, results)
        if diff is not None:
            return diff
        if self.protocol == 3:
            diff = self._leftover_pushes(index)
            if diff is not None:
                return diff
        if resync:
            self.resync(resync)
        return None

    def _execute(self, unit):
        """Send the unit to both sides; a Result per command (two for a wake step)."""
        out = {}
        in_multi = []
        subs = {}
        for side in (self.ref, self.proxy):
            cmds = unit.cmds
            if len(cmds) == 1 and cmds[0].waker is not None:
                out[side.name] = self._wake(side, unit.conn, cmds[0])
                continue
            conn = side.conns[unit.conn]
            replies = []
            try:
                conn.send(b"".join(encode(c.argv) for c in cmds), TIMEOUT * self.scale)
            except (OSError, ConnectionClosed, ReplyTimeout):
                out[side.name] = [[b"<send failed>"] for _ in cmds]
                continue
            for i, cmd in enumerate(cmds):
                if replies and replies[-1][-1].startswith(b"<"):
                    replies.append([b"<not read: an earlier reply is missing>"])
                    continue
                if cmd.name == b"PUBLISH":
                    subs.setdefault(i, {})[side.name] = side.trackers[unit.conn].snapshot()
                replies.append(self._read(side, unit.conn, cmd))
                if side is self.ref:
                    in_multi.append(side.trackers[unit.conn].multi)
            out[side.name] = replies
        results = []
        if len(unit.cmds) == 1 and unit.cmds[0].waker is not None:
            blocked = unit.cmds[0]
            results.append(Result(unit.conn, blocked, out["reference"][0], out["proxy"][0]))
            results.append(Result(blocked.wake_conn, blocked.waker, out["reference"][1],
                                  out["proxy"][1]))
        else:
            for i, cmd in enumerate(unit.cmds):
                results.append(Result(unit.conn, cmd, out["reference"][i], out["proxy"][i],
                                      in_multi[i] if i < len(in_multi) else False,
                                      subs.get(i)))
        return results

    def _read(self, side, index, cmd):
        """The reply frames of one command; a marker frame if none came. In RESP3 SUBSCRIBE
        and its kin answer with confirmation pushes (or an error reply)."""
        tracker = side.trackers[index]
        conn = side.conns[index]
        timeout = TIMEOUT * self.scale
        frames = []
        try:
            if tracker.pushed(cmd.argv):
                first, pushed = conn.read_reply_or_push(timeout, is_confirmation)
                frames.append(first)
                if pushed:
                    for _ in range(tracker.frames(cmd.argv) - 1):
                        frames.append(conn.read_push(timeout, is_confirmation))
            else:
                frames.append(conn.read_reply(timeout))
                if not frames[0].startswith(b"-"):
                    for _ in range(tracker.frames(cmd.argv) - 1):
                        frames.append(conn.read_reply(timeout))
        except ReplyTimeout:
            frames.append(b"<no reply within %gs>" % (TIMEOUT * self.scale))
        except ConnectionClosed:
            frames.append(b"<connection closed>")
        tracker.observe(cmd.argv, frames)
        return frames

    def _wake(self, side, index, blocked):
        """A blocking command on connection `index`, woken by `blocked.waker` on another
        connection once the server (or a shard) reports a blocked client."""
        conn = side.conns[index]
        conn.send(encode(blocked.argv))
        deadline = time.monotonic() + TIMEOUT * self.scale
        while time.monotonic() < deadline and not conn.has_reply():
            if self.servers.blocked_clients(side.name) > 0:
                break
            time.sleep(0.002)
        waker_conn = side.conns[blocked.wake_conn]
        waker_conn.send(encode(blocked.waker.argv))
        woke = self._read(side, blocked.wake_conn, blocked.waker)
        return [self._read(side, index, blocked), woke]

    # ---- judging ----

    def _judge(self, index, result, resync):
        cmd = result.cmd
        tx = self.tx[result.conn]
        queued = tx.queued if cmd.name == b"EXEC" else None
        ref = compare.normalise_frames(
            cmd.argv, [compare.normalise(cmd.argv, f, queued, self.restored) for f in result.ref])
        proxy = compare.normalise_frames(
            cmd.argv, [compare.normalise(cmd.argv, f, queued, self.restored)
                       for f in result.proxy])
        diff = None
        if self.dirty and not self.downtime and self._touches_dirty(cmd, tx):
            self.stats.skipped += 1
        elif ref == proxy:
            self.stats.compared += 1
        else:
            self.stats.compared += 1
            diff = self._difference(index, result, ref, proxy, tx, resync)
        # The keys of a transaction: its WATCH's and its commands'.
        if result.in_multi or cmd.name in (b"WATCH", b"EXEC", b"DISCARD"):
            tx.keys.extend(cmd.keys)
            if not tx.pinned and cmd.keys and result.proxy[:1] in ([b"+OK\r\n"],
                                                                   [b"+QUEUED\r\n"]):
                tx.pinned = cmd.keys[:1]
        if ref[:1] == [b"+QUEUED\r\n"]:
            tx.queued.append(cmd.argv)
        self.note_load(cmd, result.ref[0])
        # What ends a transaction and its WATCH; "EXEC without MULTI" ends nothing.
        ends = (b"EXEC", b"DISCARD", b"RESET", b"UNWATCH")
        if cmd.name in ends and not result.in_multi and b"without MULTI" not in result.ref[0]:
            self.tx[result.conn] = TxState()
        return diff

    def _difference(self, index, result, ref, proxy, tx, resync):
        """None if the difference is allowed (or tolerated in fault mode), else a Difference."""
        cmd = result.cmd
        if len(ref) == 1 and len(proxy) == 1:
            ctx = compare.Context(tx.pinned, tx.refused)
            reason = compare.allowed(cmd, ref[0], proxy[0], ctx)
            if reason is not None:
                self.stats.allowed += 1
                self.stats.allowed_reasons[reason] = self.stats.allowed_reasons.get(reason, 0) + 1
                if result.in_multi and cmd.name != b"EXEC":
                    tx.refused = True
                elif cmd.name == b"EXEC":
                    resync.extend(tx.keys)
                elif compare.changes_state(cmd, reason):
                    resync.extend(cmd.keys)
                return None
        if self.fault_mode and self._tolerated(result, proxy, tx):
            self.stats.tolerated += 1
            return None
        return Difference(index, result.conn, cmd.text(), result.ref, result.proxy, cmd)

    def _tolerated(self, result, proxy, tx):
        """Fault mode (faults.py): the shard-unavailable error stands in for any reply. The
        proxy may or may not have applied the request, so its keys become dirty. A
        transaction with such a reply may end in any -EXECABORT, and one whose WATCH got it
        in any reply (the client was told that its WATCH failed)."""
        cmd = result.cmd
        in_tx = result.in_multi or cmd.name == b"EXEC"
        if len(proxy) == 1 and compare.unavailable(proxy[0]):
            if cmd.name == b"WATCH" and not in_tx:
                tx.watch_failed = True
            elif in_tx:
                tx.tainted = True
            self.dirty.update(tx.keys if cmd.name == b"EXEC" else cmd.keys)
            return True
        if cmd.name == b"EXEC" and (tx.watch_failed or
                                    tx.tainted and proxy[0].startswith(b"-EXECABORT")):
            self.dirty.update(tx.keys)
            return True
        return False

    def _touches_dirty(self, cmd, tx):
        keys = tx.keys if cmd.name == b"EXEC" else cmd.keys
        if cmd.name in (b"DBSIZE", b"KEYS", b"RANDOMKEY"):
            return True
        return any(k in self.dirty for k in keys)

    def _messages(self, index, unit, results):
        """Read and compare the pub/sub messages this unit's PUBLISHes delivered: in-band
        arrays on a RESP2 connection, pushes on a RESP3 one. The publishing connection itself
        can be subscribed only in RESP3; what it meets is its state when it published."""
        publishes = [r for r in results if r.cmd.name == b"PUBLISH" and len(r.cmd.argv) == 3]
        if not publishes:
            return None
        for other in range(self.count):
            got = {}
            for side in (self.ref, self.proxy):
                proto, channels, patterns = side.trackers[other].snapshot()
                expected = 0
                for r in publishes:
                    reply = r.ref if side is self.ref else r.proxy
                    if other == unit.conn:
                        if not r.subs:
                            continue
                        proto, channels, patterns = r.subs[side.name]
                    if reply[0].startswith(b":"):
                        expected += messages_expected(r.cmd.argv[1], channels, patterns)
                messages = []
                conn = side.conns[other]
                for _ in range(expected):
                    try:
                        if proto == 3:
                            messages.append(conn.read_push(TIMEOUT * self.scale, is_message))
                        else:
                            messages.append(conn.read_reply(TIMEOUT * self.scale))
                    except (ReplyTimeout, ConnectionClosed):
                        messages.append(b"<message missing>")
                        break
                got[side.name] = compare.normalise_messages(messages)
            if got["reference"] != got["proxy"]:
                what = "messages on connection %d after %s" % (
                    other, "; ".join(r.cmd.text() for r in publishes))
                return Difference(index, other, what, got["reference"], got["proxy"])
        return None

    def _leftover_pushes(self, index):
        """RESP3: the pushes that arrived after a step beyond those it explains (its
        confirmations and messages), which must be the same on both sides (normally none).
        One that arrives late shows in a later step."""
        for other in range(self.count):
            left = {side.name: compare.normalise_messages(side.conns[other].take_pushes())
                    for side in (self.ref, self.proxy)}
            if left["reference"] != left["proxy"]:
                what = "pushes on connection %d that no command of the step explains" % other
                return Difference(index, other, what, left["reference"], left["proxy"])
        return None

    # ---- keeping the keyspaces equal ----

    def resync(self, keys):
        """Copy keys that differ from the reference to the proxy (DUMP/RESTORE, with the time
        left). Keys that are equal are left alone: a RESTORE would touch them, and so break
        a WATCH on the proxy's side only. True when every key is equal now."""
        ok = True
        timeout = TIMEOUT * self.scale
        for key in dict.fromkeys(keys):
            state = {}
            for side in (self.ref, self.proxy):
                pttl = side.admin.call([b"PTTL", key], timeout)
                dump = side.admin.call([b"DUMP", key], timeout)
                state[side.name] = (pttl, dump)
            (ref_pttl, ref_dump), (proxy_pttl, proxy_dump) = state["reference"], state["proxy"]
            if ref_dump == proxy_dump and (ref_pttl == b":-1\r\n") == (proxy_pttl == b":-1\r\n"):
                self.dirty.discard(key)
                continue
            if ref_pttl == b":-2\r\n":
                reply = self.proxy.admin.call([b"DEL", key], timeout)
                good = reply.startswith(b":")
            else:
                ttl = max(int(ref_pttl[1:-2]), 0)
                reply = self.proxy.admin.call([b"RESTORE", key, b"%d" % ttl, decode(ref_dump),
                                               b"REPLACE"], timeout)
                good = reply == b"+OK\r\n"
                self.restored.add(key)
            if good:
                self.dirty.discard(key)
            else:
                self.dirty.add(key)
                ok = False
        return ok

    def note_load(self, cmd, ref_reply):
        """Remember a successful SCRIPT LOAD / FUNCTION LOAD, to repeat it on a restarted
        shard (fault mode)."""
        if cmd.name in (b"SCRIPT", b"FUNCTION") and len(cmd.argv) > 1 and \
                cmd.argv[1].upper() == b"LOAD" and not ref_reply.startswith(b"-"):
            self.loads.append(cmd.argv)
