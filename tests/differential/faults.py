"""Fault mode (--kill-shard): while the stream runs, one shard is SIGKILLed and, some commands
later, restarted empty on the same port.

The rule the runner enforces throughout (compare.unavailable, Runner._tolerated): every proxy
reply is either byte-equal to the reference's or the shard-unavailable error (its -EXECABORT
and -LOADING forms included); a transaction with such a reply may end in any -EXECABORT, and
one whose WATCH got it may end in any reply. How the keyspaces stay comparable across the
data loss:

- Just before the kill, connections in subscribed mode are replaced on both sides (the proxy
  closes a subscriber whose shard goes away, by design), and the generator sends no pub/sub
  commands while the shard is down. Open transactions and WATCHes stay open across the kill
  and the restart, on the same connections.
- While the shard is down no request for its keys can succeed through the proxy; the keys of
  the other shards stay equal and are compared as usual.
- At the restart the reference loses the same data: once the proxy reports the shard up
  again, the reference DELs every key of that shard (so a WATCH of such a key fails on the
  reference as the lost data demands). The run's SCRIPT LOADs and FUNCTION LOADs are repeated
  through the proxy, since the new shard has none. From there on the comparison is strict
  again.
- Keys of a request that got a tolerated reply (the proxy may or may not have applied it) are
  dirty: copied from the reference to the proxy (DUMP/RESTORE) before the next step once the
  shard is up, and replies that read a dirty key are not compared until then.

WATCHes held across the kill stay in the stream: the proxy's EXEC then answers the
shard-unavailable EXECABORT, which the rule above accepts. The dedicated WATCH probe below checks
that such a transaction is never committed.
"""

import random
import time

import keyspace as ks
from compare import unavailable
from resp import Connection, decode, encode
from runner import Difference


def slot_owners(runner, shard_ports):
    """(first slot, last slot) → shard index, from the proxy's PROXY SLOTS."""
    reply = decode(runner.proxy.admin.call([b"PROXY", b"SLOTS"], 10 * runner.scale))
    return {(start, end): shard_ports.index(port) for start, end, (_, port, _) in reply}


def shard_of(owners, key):
    slot = ks.key_slot(key)
    for (start, end), shard in owners.items():
        if start <= slot <= end:
            return shard
    raise RuntimeError("no shard owns slot %d" % slot)


class KillSchedule:
    """Called by Runner.run before each unit with the number of commands done."""

    def __init__(self, runner, servers, generator, seed, commands, log):
        rng = random.Random(seed * 7919 + 17)
        self.runner = runner
        self.servers = servers
        self.generator = generator
        self.log = log
        self.shard = rng.randrange(len(servers.shard_ports))
        self.kill_at = commands // 3
        self.restart_at = self.kill_at + max(commands // 5, 1)
        self.state = "up"
        self.difference = None          # set by the WATCH probe
        owners = slot_owners(runner, servers.shard_ports)
        self.lost_keys = [k for k in ks.ALL_KEYS if shard_of(owners, k) == self.shard]
        self.watch_key = self.lost_keys[0][:self.lost_keys[0].index(b"}") + 1] + b"watched" \
            if self.lost_keys[0].startswith(b"{") else None
        self.probe = None

    def __call__(self, done):
        if self.state == "up" and done >= self.kill_at:
            self.kill()
        elif self.state == "down" and done >= self.restart_at:
            self.restart()
        return self.difference is not None

    def kill(self):
        runner = self.runner
        for i in range(runner.count):
            if runner.ref.trackers[i].subscribed or runner.proxy.trackers[i].subscribed:
                runner.ref.reconnect(i)
                runner.proxy.reconnect(i)
                runner.reset_tx(i)
                self.generator.reset_conn(i)
        if self.watch_key is not None:
            self.start_watch_probe()
        self.log("  fault: SIGKILL shard%d (port %d) after %d commands"
                 % (self.shard, self.servers.shard_ports[self.shard], self.kill_at))
        self.servers.kill_shard(self.shard)
        runner.downtime = True
        self.generator.downtime = True
        self.state = "down"

    def restart(self):
        started = time.monotonic()
        runner = self.runner
        self.servers.restart_shard(self.shard)
        self.wait_reachable()
        for key in self.lost_keys + ([self.watch_key] if self.watch_key else []):
            runner.ref.admin.call([b"DEL", key], 10 * runner.scale)
            runner.dirty.discard(key)
        for argv in runner.loads:
            argv = list(argv)
            if argv[0].upper() == b"FUNCTION" and b"REPLACE" not in (a.upper() for a in argv):
                argv.insert(2, b"REPLACE")
            runner.proxy.admin.call(argv, 10 * runner.scale)
        runner.downtime = False
        self.generator.downtime = False
        self.state = "restarted"
        self.log("  fault: shard%d restarted and reachable after %.1fs; its %d keys deleted on "
                 "the reference too" % (self.shard, time.monotonic() - started,
                                        len(self.lost_keys)))
        if self.probe is not None:
            self.finish_watch_probe()

    def wait_reachable(self):
        """Until the proxy reports every connection to the shard up (all workers). Once RESP3
        clients were served, connections_up also counts the shard connections that speak
        RESP3 for them, so it may exceed `connections` (as the proxy's own "up" state allows)."""
        deadline = time.monotonic() + 30 * self.runner.scale
        name = b"shard%d" % self.shard
        while True:
            shards = decode(self.runner.proxy.admin.call([b"PROXY", b"SHARDS"],
                                                         10 * self.runner.scale))
            info = next(dict(zip(s[::2], s[1::2])) for s in shards if s[1] == name)
            if info[b"state"] == b"up" and info[b"connections_up"] >= info[b"connections"] \
                    and not info[b"ejected"]:
                reply = self.runner.proxy.admin.call([b"EXISTS", self.lost_keys[0]],
                                                     10 * self.runner.scale)
                if reply.startswith(b":"):
                    return
            if time.monotonic() > deadline:
                raise RuntimeError("the proxy did not reach the restarted shard: %r" % info)
            time.sleep(0.05)

    # ---- WATCH across the restart (a known bug; --known-bugs only) ----

    def start_watch_probe(self):
        """Both sides: SET a key of the shard, WATCH it on a connection of its own."""
        self.probe = {}
        for side in (self.runner.ref, self.runner.proxy):
            conn = Connection(side.port, 10 * self.runner.scale)
            conn.call([b"SET", self.watch_key, b"before"], 10 * self.runner.scale)
            conn.call([b"WATCH", self.watch_key], 10 * self.runner.scale)
            self.probe[side.name] = conn

    def finish_watch_probe(self):
        """MULTI / SET / EXEC on the watching connections: the key lost its value with the
        shard, so EXEC must not run the transaction (the reference answers nil)."""
        replies = {}
        for name, conn in self.probe.items():
            conn.send(encode([b"MULTI"]) + encode([b"SET", self.watch_key, b"after"]) +
                      encode([b"EXEC"]))
            replies[name] = [conn.read_reply(10 * self.runner.scale) for _ in range(3)]
            conn.close()
        self.probe = None
        ref, proxy = replies["reference"], replies["proxy"]
        if ref != proxy and not (unavailable(proxy[2]) or proxy[2].startswith(b"-EXECABORT")):
            self.difference = Difference(
                -1, -1, "WATCH %s; shard%d killed and restarted; MULTI; SET %s after; EXEC"
                % (self.watch_key.decode(), self.shard, self.watch_key.decode()), ref, proxy)
