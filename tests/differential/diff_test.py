#!/usr/bin/python3
"""Differential test: the same seeded command streams to one redis-server and through
shardproxy (in front of 4 redis-server shards), replies compared byte for byte.

Each seed runs in two modes: one command at a time over 3 connections taking turns, and
pipelined (each turn writes a batch of commands in one sendall); and in two protocols, RESP2
and RESP3 (every client connection of the stream starts with HELLO 3 on both sides). Any
difference that is not on the allow-list in compare.py fails the case; it is printed with the
seed, mode, protocol, connection and a delta-debugged minimal command sequence that reproduces
it. --kill-shard runs the fault mode instead (faults.py). --redis-vs-redis puts a second
redis-server where the proxy was, which checks the test's own machinery: nothing may differ.
docs/testing.md describes the test, its allow-list and its results.

  diff_test.py --shardproxy build/proxy/shardproxy --fixed-seeds
  diff_test.py --shardproxy build/proxy/shardproxy --duration 300 --protocol 3
  diff_test.py --shardproxy build/proxy/shardproxy --kill-shard --fixed-seeds
  diff_test.py --redis-vs-redis --fixed-seeds

The last line is "N passed, M failed" (N + M = seeds x protocols x modes); the exit status is 1
on any failure, 2 when the servers cannot be started.
"""

import argparse
import os
import random
import shutil
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True      # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import compare  # noqa: E402
import faults  # noqa: E402
from generator import KNOWN_BUGS, Generator  # noqa: E402
from minimise import Minimiser, build  # noqa: E402
from runner import ProtocolRefused, Runner, Stats  # noqa: E402
from servers import Servers, is_sanitized  # noqa: E402

# Seeds every build runs, in each protocol (about 30 s a protocol on a Release build on 2 cores).
FIXED_SEEDS = [1, 2, 3, 4, 5, 6, 7, 8]
FIXED_COMMANDS = 2000
# The fault mode's seeds: every mode is one-at-a-time with a kill and restart in the middle.
FIXED_KILL_SEEDS = [11, 12]
MODES = ["single", "pipeline"]
PROTOCOLS = {"2": [2], "3": [3], "both": [2, 3]}
MAX_FAILED_CASES = 20      # --keep-going stops after this many failed cases
SHARDS = 4
CONNECTIONS = 3


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--shardproxy", help="the shardproxy binary")
    target.add_argument("--redis-vs-redis", action="store_true",
                        help="a second redis-server in the proxy's place: checks the test "
                             "itself, every case must pass")
    p.add_argument("--redis-server", default="/usr/bin/redis-server")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--fixed-seeds", action="store_true",
                       help="the fixed seed list (bounded time; what ctest runs)")
    which.add_argument("--seeds", help="comma-separated seeds")
    which.add_argument("--duration", type=float,
                       help="random seeds until this many seconds have passed")
    p.add_argument("--commands", type=int, help="commands per seed and mode (default %d)"
                   % FIXED_COMMANDS)
    p.add_argument("--modes", help="comma-separated subset of: " + ",".join(MODES))
    p.add_argument("--protocol", choices=sorted(PROTOCOLS), default="both",
                   help="RESP2, RESP3 (HELLO 3 on every connection), or both in turn for each "
                        "seed (the default)")
    p.add_argument("--kill-shard", action="store_true",
                   help="fault mode: SIGKILL and restart one shard during each stream")
    p.add_argument("--known-bugs", nargs="?", const="all", default="",
                   help="also generate the command forms of these known proxy bugs (comma-"
                        "separated names from generator.KNOWN_BUGS; no value: all of them)")
    p.add_argument("--timeout-scale", type=float,
                   help="multiply every timeout (default: 10 for a sanitizer build, else 1)")
    p.add_argument("--minimise-seconds", type=float, default=90,
                   help="time budget for minimising one difference (times the scale)")
    p.add_argument("--keep-going", action="store_true",
                   help="in --duration mode, keep running seeds after a failure")
    args = p.parse_args(argv)
    if not (args.fixed_seeds or args.seeds or args.duration):
        p.error("give --fixed-seeds, --seeds or --duration")
    if args.redis_vs_redis and args.kill_shard:
        p.error("--kill-shard needs the proxy's shards; it does not go with --redis-vs-redis")
    names = args.known_bugs.split(",") if args.known_bugs else []
    args.known_bugs = set(KNOWN_BUGS) if names == ["all"] else set(names)
    unknown = args.known_bugs - set(KNOWN_BUGS)
    if unknown:
        p.error("unknown --known-bugs names: %s (known: %s)"
                % (", ".join(sorted(unknown)), ", ".join(sorted(KNOWN_BUGS))))
    return args


def seed_source(args):
    """Yield seeds: the fixed list, the given ones, or random ones until the time is up."""
    if args.seeds:
        yield from (int(s) for s in args.seeds.split(","))
    elif args.fixed_seeds:
        yield from FIXED_KILL_SEEDS if args.kill_shard else FIXED_SEEDS
    else:
        end = time.monotonic() + args.duration
        rng = random.SystemRandom()
        while time.monotonic() < end:
            yield rng.randrange(1, 2 ** 31)


def show_reply(frames):
    return " ".join(repr(f)[1:] if isinstance(f, bytes) else repr(f) for f in frames)


def show_units(units, mode):
    lines = []
    for unit in units:
        for i, cmd in enumerate(unit.cmds):
            mark = ""
            if mode == "pipeline":
                mark = " [batch]" if i == 0 and len(unit.cmds) > 1 else (
                    " [  ... ]" if i > 0 else "")
            line = "    conn%d%s> %s" % (unit.conn, mark, cmd.text())
            if cmd.waker is not None:
                line += "    (blocks; then conn%d> %s)" % (cmd.wake_conn, cmd.waker.text())
            lines.append(line)
    return "\n".join(lines)


def resp(protocol):
    return "RESP%d" % protocol


class Tally:
    """Cases passed and failed, and their time, for one protocol."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.seconds = 0.0


class Session:
    """The servers, the runner and the tallies of one invocation."""

    def __init__(self, args, servers, scale, protocols):
        self.args = args
        self.servers = servers
        self.scale = scale
        self.runner = Runner(servers, CONNECTIONS, scale)
        self.tallies = {protocol: Tally() for protocol in protocols}
        self.seeds = 0
        self.differences = 0
        self.refusals = {}          # protocol -> [cases that failed at HELLO, the first error]
        self.interrupted = False    # a case was interrupted (and counted as failed)

    @property
    def passed(self):
        return sum(t.passed for t in self.tallies.values())

    @property
    def failed(self):
        return sum(t.failed for t in self.tallies.values())

    def run_case(self, seed, mode, protocol, commands):
        """One seed in one mode and protocol; counted in its protocol's tally."""
        tally = self.tallies[protocol]
        started = time.monotonic()
        try:
            ok = self._run_case(seed, mode, protocol, commands)
        except KeyboardInterrupt:
            tally.failed += 1
            self.interrupted = True
            raise
        finally:
            tally.seconds += time.monotonic() - started
        if ok:
            tally.passed += 1
        else:
            tally.failed += 1
        return ok

    def _run_case(self, seed, mode, protocol, commands):
        started = time.monotonic()
        case = "seed %d mode %s %s" % (seed, mode, resp(protocol))
        generator = Generator(seed, mode, CONNECTIONS, known_bugs=self.args.known_bugs,
                              protocol=protocol)
        trace = []
        try:
            self.runner.open(protocol, fault_mode=(mode == "kill"))
            stop = None
            if mode == "kill":
                stop = faults.KillSchedule(self.runner, self.servers, generator, seed, commands,
                                           log=print)
            diff = self.runner.run(generator.units(commands), trace, stop)
            if diff is None and stop is not None:
                diff = stop.difference
        except ProtocolRefused as e:    # no stream ran: one line says why
            print("FAIL %s: %s" % (case, e), flush=True)
            self.refusals.setdefault(protocol, [0, e])[0] += 1
            self.runner.recover()
            self.differences += 1
            return False
        except Exception as e:      # the proxy closed on us, a server died, ...
            print("FAIL %s: %s: %s" % (case, type(e).__name__, e))
            if not self.servers.proxy_alive():
                print("  %s exited; its log ends:\n" % self.servers.proxy_name +
                      self.servers.log_tail("proxy"))
            self.runner.recover()
            self.differences += 1
            return False
        if diff is None and not self.servers.proxy_alive():
            print("FAIL %s: %s exited" % (case, self.servers.proxy_name))
            print(self.servers.log_tail("proxy"))
            self.runner.recover()
            return False
        elapsed = time.monotonic() - started
        if mode == "kill":
            self.runner.recover()       # the shard is up again, whatever happened
        if diff is None:
            print("seed %d %s %s: %d commands, ok (%.1fs)" % (
                seed, mode, resp(protocol), sum(len(u.cmds) for u in trace), elapsed),
                flush=True)
            return True
        self.differences += 1
        self.report(seed, mode, protocol, commands, trace, diff)
        return False

    def report(self, seed, mode, protocol, commands, trace, diff):
        print("FAIL seed %d mode %s %s connection %d (step %d of the stream)"
              % (seed, mode, resp(protocol), diff.conn, diff.unit_index))
        print("  request:   %s" % diff.what)
        print("  reference: %s" % show_reply(diff.ref))
        print("  proxy:     %s" % show_reply(diff.proxy))
        if mode == "kill" and diff.unit_index >= 0:
            print("  (fault mode is timing-dependent and not minimised; the last steps were:)")
            print(show_units(trace[max(0, diff.unit_index - 15):diff.unit_index + 1], mode))
        elif mode == "kill":
            print("  (the fault mode's WATCH probe, on connections of its own)")
        else:
            started = time.monotonic()
            saved, self.runner.stats = self.runner.stats, Stats()   # not counted in the summary
            m = Minimiser(self.runner, trace, diff, protocol,
                          self.args.minimise_seconds * self.scale)
            atoms, complete = m.run()
            self.runner.stats = saved
            print("  minimal sequence in %s (%d commands; %d runs, %.1fs%s)%s:" % (
                resp(protocol), len(atoms), m.runs, time.monotonic() - started,
                "" if complete else "; budget ran out, may not be minimal",
                "; every connection starts with HELLO 3" if protocol == 3 else ""))
            print(show_units(build(trace, atoms), mode))
        target = ("--redis-vs-redis" if self.args.redis_vs_redis
                  else "--shardproxy %s" % self.args.shardproxy)
        print("  reproduce: %s %s --seeds %d %s --protocol %d --commands %d%s" % (
            sys.argv[0], target, seed,
            "--kill-shard" if mode == "kill" else "--modes " + mode, protocol, commands,
            " --known-bugs " + ",".join(sorted(self.args.known_bugs))
            if self.args.known_bugs else ""), flush=True)


def _terminated(signum, frame):
    raise KeyboardInterrupt()


def main(argv):
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _terminated)     # stop the servers on a SIGTERM too
    if args.kill_shard:
        modes = ["kill"]
    else:
        modes = args.modes.split(",") if args.modes else MODES
    protocols = PROTOCOLS[args.protocol]
    scale = args.timeout_scale or (
        10.0 if args.shardproxy and is_sanitized(args.shardproxy) else 1.0)
    commands = args.commands or FIXED_COMMANDS
    tmp = tempfile.mkdtemp(prefix="sp-differential-")
    servers = Servers(tmp, args.redis_server, None if args.redis_vs_redis else args.shardproxy,
                      SHARDS, scale)
    started = time.monotonic()
    session = None
    try:
        try:
            servers.start()
        except (RuntimeError, OSError) as e:
            print("cannot start the servers: %s" % e)
            print("0 passed, 1 failed")
            return 2
        print("differential: %s, %d connections per target, modes %s, protocols %s, %d "
              "commands per seed and mode, timeout scale %g" % (
                  "redis-server against a second redis-server" if args.redis_vs_redis else
                  "%d shards" % SHARDS, CONNECTIONS, ",".join(modes),
                  ",".join(resp(p) for p in protocols), commands, scale), flush=True)
        session = Session(args, servers, scale, protocols)
        for seed in seed_source(args):
            session.seeds += 1
            if args.duration:
                print("seed %d" % seed, flush=True)
            for protocol in protocols:
                for mode in modes:
                    session.run_case(seed, mode, protocol, commands)
            if session.failed and args.duration and (
                    not args.keep_going or session.failed >= MAX_FAILED_CASES):
                break
    except KeyboardInterrupt:
        print("interrupted: the case that was running counts as failed")
        if session is not None and not session.interrupted:
            next(iter(session.tallies.values())).failed += 1
    finally:
        if session is not None:
            session.runner.close()
        servers.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    if session is None:
        print("0 passed, 1 failed")
        return 1
    stats = session.runner.stats
    print("summary: %d seeds, %d cases, %d commands compared, %d differences, %d allow-listed "
          "differences (allow-list size %d), %d tolerated unavailable replies, %d skipped "
          "(dirty keys), %.1fs" % (
              session.seeds, session.passed + session.failed, stats.compared,
              session.differences, stats.allowed, len(compare.ALLOWED), stats.tolerated,
              stats.skipped, time.monotonic() - started))
    for protocol, tally in session.tallies.items():
        print("  %s: %d passed, %d failed, %.1fs" % (resp(protocol), tally.passed, tally.failed,
                                                    tally.seconds))
        if protocol in session.refusals:
            count, first = session.refusals[protocol]
            print("    %d of them failed at HELLO 3 before any command ran: %s"
                  % (count, first))
    for reason, count in sorted(stats.allowed_reasons.items()):
        print("  allowed %5d x %s" % (count, reason))
    left_out = sorted(set(KNOWN_BUGS) - args.known_bugs)
    if left_out:
        print("known proxy bugs not generated (--known-bugs to include): %s"
              % ", ".join(left_out))
    print("%d passed, %d failed" % (session.passed, session.failed))
    return 1 if session.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
