"""The processes of one differential run: a reference redis-server, the redis-server shards and
shardproxy in front of them, each on a free loopback port with its own temp directory, all
stopped by PID in stop_all(). A shard can be SIGKILLed and restarted on its port (fault mode).
Without a shardproxy binary (--redis-vs-redis) a second redis-server takes the proxy's place
and there are no shards: a check of the test itself."""

import ctypes
import os
import signal
import subprocess
import sys
import time

from resp import Connection

# free_port and wait_for_port are the integration tests' own (tests/integration/sp_procs.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "integration"))
from sp_procs import free_port, wait_for_port  # noqa: E402


def _die_with_parent():
    """In the child: SIGKILL it when the test process dies, even if nothing could run its
    finally blocks (ctest killing it on a timeout)."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def is_sanitized(binary):
    """Whether the binary carries an ASAN or TSAN runtime (its timeouts then scale up)."""
    try:
        with open(binary, "rb") as f:
            data = f.read()
    except OSError:
        return False
    return b"__tsan_init" in data or b"__asan_init" in data


class Servers:
    """Reference redis-server + `shard_count` shards + shardproxy (shardproxy None: a second
    redis-server as the proxy, no shards). Use start(), then stop_all()."""

    def __init__(self, tmp, redis_server, shardproxy, shard_count, scale):
        self.tmp = tmp
        self.redis_server = redis_server
        self.shardproxy = shardproxy
        self.shard_count = shard_count if shardproxy else 0
        self.proxy_name = "shardproxy" if shardproxy else "the second redis-server"
        self.scale = scale
        self.procs = {}          # name -> Popen; every process this run started and not reaped
        self.logs = []
        self.ref_port = None
        self.shard_ports = []
        self.proxy_port = None

    # ---- start and stop ----

    def start(self):
        self.ref_port = self._start_redis("reference")
        self.shard_ports = [self._start_redis("shard%d" % i) for i in range(self.shard_count)]
        self._start_proxy()

    def _start_proxy(self):
        if self.shardproxy:
            self._start_shardproxy()
        else:
            self.proxy_port = self._start_redis("proxy")

    def stop_all(self):
        for name in list(self.procs):
            self._stop(name)
        for log in self.logs:
            log.close()
        self.logs = []

    def _spawn(self, name, argv):
        log = open(os.path.join(self.tmp, name + ".log"), "ab")
        self.logs.append(log)
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        self.procs[name] = proc
        return proc

    def _stop(self, name, sig=signal.SIGTERM):
        proc = self.procs.pop(name, None)
        if proc is None:
            return
        if proc.poll() is None:
            os.kill(proc.pid, sig)
            try:
                proc.wait(timeout=10 * self.scale)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()

    def _redis_argv(self, name, port):
        workdir = os.path.join(self.tmp, name)
        os.makedirs(workdir, exist_ok=True)
        # hz 100: an idle server notices an expired blocking timeout (BLPOP k 0.01) within
        # 10 ms instead of 100 ms; the streams' many short blocking calls would wait that long.
        argv = [self.redis_server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", workdir, "--daemonize", "no", "--hz", "100"]
        return argv

    def _start_redis(self, name, port=None):
        # A port found free can be taken before redis-server binds it: try a few.
        for _ in range(5):
            use = port or free_port()
            proc = self._spawn(name, self._redis_argv(name, use))
            if wait_for_port(use, proc, 10 * self.scale):
                return use
            self._stop(name)
            if port is not None:
                time.sleep(0.2)
        raise RuntimeError("redis-server %s did not start:\n%s" % (name, self.log_tail(name)))

    def _start_shardproxy(self):
        for _ in range(5):
            port = free_port()
            proc = self._spawn("proxy", [
                self.shardproxy, "--listen", "127.0.0.1", "--port", str(port), "--workers", "2",
                "--shards", ",".join("127.0.0.1:%d" % p for p in self.shard_ports),
                "--metrics-listen", "off", "--log-level", "warn"])
            if wait_for_port(port, proc, 20 * self.scale):
                self.proxy_port = port
                return
            self._stop("proxy")
        raise RuntimeError("shardproxy did not start:\n" + self.log_tail("proxy"))

    def restart_proxy(self):
        """A new proxy (after one exited), on a new port."""
        self._stop("proxy")
        self._start_proxy()

    # ---- fault injection ----

    def kill_shard(self, index):
        """SIGKILL one shard; its data is gone (no persistence)."""
        self._stop("shard%d" % index, sig=signal.SIGKILL)

    def restart_shard(self, index):
        """Start the killed shard again on its port, empty."""
        self._start_redis("shard%d" % index, port=self.shard_ports[index])

    def restart_dead_shards(self):
        """Start every shard that is not running (after a fault-mode case that failed while
        its shard was down); the names of those restarted."""
        restarted = []
        for i in range(self.shard_count):
            proc = self.procs.get("shard%d" % i)
            if proc is None or proc.poll() is not None:
                self.procs.pop("shard%d" % i, None)
                self.restart_shard(i)
                restarted.append("shard%d" % i)
        return restarted

    # ---- observation ----

    def proxy_alive(self):
        proc = self.procs.get("proxy")
        return proc is not None and proc.poll() is None

    def log_tail(self, name, lines=30):
        path = os.path.join(self.tmp, name + ".log")
        try:
            with open(path, "rb") as f:
                text = f.read().decode(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def blocked_clients(self, target):
        """Clients blocked in a blocking command: on the reference, or summed over the shards."""
        if target == "reference":
            ports = [self.ref_port]
        else:
            ports = self.shard_ports if self.shardproxy else [self.proxy_port]
        total = 0
        for port in ports:
            try:
                conn = Connection(port, 5 * self.scale)
            except OSError:
                continue        # a shard that fault mode killed
            try:
                info = conn.call([b"INFO", b"clients"], 5 * self.scale)
            except Exception:
                continue
            finally:
                conn.close()
            for line in info.split(b"\r\n"):
                if line.startswith(b"blocked_clients:"):
                    total += int(line.split(b":")[1])
        return total
