"""Process helpers for the Python integration tests of metrics and operations: free loopback
ports, redis-server shards, the shardproxy binary (SHARDPROXY_BIN) and a Prometheus server, each
started with its own temp files and stopped by PID. Not a test module itself."""

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def resp(*args):
    """One command encoded as a RESP array of bulk strings (bytes or anything str() takes)."""
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def read_exactly(s, n):
    """Exactly n bytes from socket s; an AssertionError if it closes first."""
    chunks = []
    while n > 0:
        chunk = s.recv(min(n, 1 << 20))
        if not chunk:
            raise AssertionError("connection closed with %d bytes to go" % n)
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


_HANDED_OUT = set()


def free_port():
    """A loopback port nothing listens on, never one this process was given before: the kernel
    may hand back a port just released, and two calls in a row (a client port and a metrics port)
    must not name the same one."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port
    raise RuntimeError("no loopback port that was not handed out already")


def _family(pid):
    """pid and its descendants (a wrapper's child may be the one that listens)."""
    pids, todo = set(), [pid]
    while todo:
        p = todo.pop()
        pids.add(p)
        with contextlib.suppress(OSError):
            for task in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, task)) as f:
                    todo.extend(int(c) for c in f.read().split() if int(c) not in pids)
    return pids


def listens_on(pid, port):
    """True when process pid (or a descendant) holds a socket listening on port. Something
    answering on a port is not yet the process a test started: two test processes can be handed
    the same free port, and the one that loses the bind exits while the winner answers."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add("socket:[%s]" % fields[9])
    for p in _family(pid) if inodes else ():
        with contextlib.suppress(OSError):
            for fd in os.listdir("/proc/%d/fd" % p):
                with contextlib.suppress(OSError):
                    if os.readlink("/proc/%d/fd/%s" % (p, fd)) in inodes:
                        return True
    return False


def wait_for_port(port, proc=None, timeout=15.0):
    """True once something accepts connections on 127.0.0.1:port; with proc, once proc (or its
    child) itself listens there, and False as soon as it exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                if proc is None or listens_on(proc.pid, port):
                    return True
        except OSError:
            pass
        time.sleep(0.02)
    return False


def wait_for(predicate, timeout=15.0):
    """True once predicate() is true, polled every 50 ms; its last value after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def stop(proc, sig=signal.SIGTERM, timeout=15):
    if proc.poll() is None:
        os.kill(proc.pid, sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def build_dir():
    """The build directory of the shardproxy under test (SHARDPROXY_BIN is <build>/proxy/...)."""
    binary = os.environ.get("SHARDPROXY_BIN")
    if not binary or not os.access(binary, os.X_OK):
        raise RuntimeError("SHARDPROXY_BIN must name the shardproxy binary")
    return os.path.dirname(os.path.dirname(os.path.abspath(binary)))


def http_get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


@contextlib.contextmanager
def running():
    """Processes in a fresh temp directory, all stopped and the directory removed at the end:
    `with running() as procs:` (or a pytest fixture that yields from it)."""
    with tempfile.TemporaryDirectory() as tmp:
        procs = Processes(tmp)
        try:
            yield procs
        finally:
            procs.close()


class Processes:
    """Children of one test, all stopped (in reverse order, by PID) by close()."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []
        self.logs = []

    def spawn(self, argv, name):
        log = open(os.path.join(self.tmp, name + ".log"), "wb")
        self.logs.append(log)
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        self.procs.append(proc)
        return proc

    def log(self, name):
        with open(os.path.join(self.tmp, name + ".log"), "rb") as f:
            return f.read().decode(errors="replace")

    def close(self):
        for p in reversed(self.procs):
            stop(p)
        for f in self.logs:
            f.close()

    def redis(self, name):
        """A redis-server on a free port; returns (proc, port)."""
        for _ in range(5):
            port = free_port()
            d = os.path.join(self.tmp, name)
            os.makedirs(d, exist_ok=True)
            p = self.spawn(["/usr/bin/redis-server", "--port", str(port), "--bind", "127.0.0.1",
                            "--save", "", "--appendonly", "no", "--dir", d, "--daemonize", "no"],
                           name)
            if wait_for_port(port, p):
                return p, port
            stop(p)
        raise RuntimeError("redis-server did not start")

    def proxy(self, shard_ports, workers=2, extra=()):
        """shardproxy in front of the shards, /metrics on a free port; (proc, port, metrics)."""
        binary = os.environ.get("SHARDPROXY_BIN")
        if not binary or not os.access(binary, os.X_OK):
            raise RuntimeError("SHARDPROXY_BIN must name the shardproxy binary")
        for _ in range(5):
            port, metrics = free_port(), free_port()
            p = self.spawn([binary, "--listen", "127.0.0.1", "--port", str(port),
                            "--workers", str(workers),
                            "--shards", ",".join("127.0.0.1:%d" % s for s in shard_ports),
                            "--metrics-listen", "127.0.0.1:%d" % metrics,
                            "--log-level", "info"] + list(extra), "proxy")
            if wait_for_port(port, p) and wait_for_port(metrics, p):
                return p, port, metrics
            stop(p)
        raise RuntimeError("shardproxy did not start:\n" + self.log("proxy"))

    def prometheus(self, targets, scrape_interval="1s"):
        """A Prometheus server scraping `targets` ("host:port"); returns (proc, base_url)."""
        config = os.path.join(self.tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: %s\n  evaluation_interval: %s\n"
                    "scrape_configs:\n  - job_name: shardproxy\n    static_configs:\n"
                    "      - targets: [%s]\n"
                    % (scrape_interval, scrape_interval, ", ".join('"%s"' % t for t in targets)))
        for _ in range(5):
            port = free_port()
            p = self.spawn([PROMETHEUS, "--config.file=" + config,
                            "--storage.tsdb.path=" + os.path.join(self.tmp, "tsdb"),
                            "--web.listen-address=127.0.0.1:%d" % port,
                            "--log.level=warn"], "prometheus")
            if wait_for_port(port, p, timeout=30):
                base = "http://127.0.0.1:%d" % port
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    try:
                        if http_get(base + "/-/ready")[0] == 200:
                            return p, base
                    except OSError:
                        pass
                    time.sleep(0.1)
            stop(p)
        raise RuntimeError("prometheus did not start:\n" + self.log("prometheus"))


def query(base, expr):
    """Prometheus instant query: the result vector (list of {metric, value})."""
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    status, body = http_get(url)
    data = json.loads(body)
    if data.get("status") != "success":
        raise AssertionError("query %r failed: %s" % (expr, body))
    return data["data"]["result"]


# ---- the Grafana dashboard ----

DASHBOARD = os.path.join(REPO, "conf", "grafana-dashboard.json")
KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
            "group_left", "group_right", "inf", "nan"}


def dashboard_exprs():
    """Every PromQL expression of the dashboard (panel targets and query variables)."""
    with open(DASHBOARD) as f:
        dash = json.load(f)
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                out.append(t["expr"])
            walk(p.get("panels", []))

    walk(dash["panels"])
    return dash, out


def promql(expr):
    """A dashboard expression with Grafana's variables replaced, as Prometheus would get it."""
    return (expr.replace("$__rate_interval", "1m").replace("$__interval", "1m")
            .replace("$instance", ".*"))


def metric_names(expr):
    """The metric names an expression reads (not functions, labels, keywords or numbers)."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", "", e)
    e = re.sub(r"\[[^\]]*\]", "", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", e)
    names = set()
    for m in re.finditer(r"(?<![\w.])[a-zA-Z_:][a-zA-Z0-9_:]*", e):
        token = m.group(0)
        if e[m.end():].lstrip().startswith("(") or token.lower() in KEYWORDS:
            continue
        names.add(token)
    return names


def scrape_names(text):
    """Series names a scrape exposes: every family, histograms with _bucket/_sum/_count."""
    names = set()
    for line in text.splitlines():
        m = re.match(r"# TYPE (\S+) (\S+)", line)
        if m:
            name, kind = m.groups()
            names.add(name)
            if kind in ("histogram", "summary"):
                names.update({name + "_bucket", name + "_sum", name + "_count"})
    return names
