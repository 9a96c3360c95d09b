"""A real Prometheus server (Debian package prometheus) scraping the real proxy every second.

Starts 3 redis-server shards, shardproxy with /metrics on a free port and Prometheus on another
(its own config and --storage.tsdb.path in a temp dir), runs a load through the proxy and asserts
through Prometheus's HTTP query API that rate(shardproxy_requests_total[10s]) > 0, that a killed
shard shows as down (shardproxy_backend_up == 0), and that every expression of the Grafana
dashboard evaluates and every metric it names has been ingested. All processes are stopped by
PID. Also the rest of the operations kit: conf/prometheus.yml passes `promtool check config`,
conf/shardproxy.service passes `systemd-analyze verify` and its commands run.
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest
import redis

import sp_procs


def wait_for(what, fn, timeout=45.0, interval=0.5):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


@pytest.fixture
def procs():
    if not os.access(sp_procs.PROMETHEUS, os.X_OK):
        pytest.skip("prometheus (Debian package prometheus) is not installed")
    tmp = tempfile.mkdtemp(prefix="sp-prom-")
    p = sp_procs.Processes(tmp)
    yield p
    p.close()
    shutil.rmtree(tmp, ignore_errors=True)


def test_prometheus_sees_the_load_and_a_dead_shard(procs):
    shards = [procs.redis("shard%d" % i) for i in range(3)]
    _, port, metrics = procs.proxy([s[1] for s in shards], workers=2)
    _, prom = procs.prometheus(["127.0.0.1:%d" % metrics])

    stop = threading.Event()
    errors = []

    def load(n):
        try:
            r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)
            i = 0
            while not stop.is_set():
                pipe = r.pipeline(transaction=False)
                for k in range(20):
                    pipe.set("load:%d:%d" % (n, k), i)
                    pipe.get("load:%d:%d" % (n, k))
                pipe.execute(raise_on_error=False)
                i += 1
                time.sleep(0.005)
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(repr(e))

    threads = [threading.Thread(target=load, args=(n,), daemon=True) for n in range(3)]
    for t in threads:
        t.start()
    try:
        up = wait_for("the proxy target to be up",
                      lambda: sp_procs.query(prom, 'up{job="shardproxy"} == 1'))
        assert len(up) == 1
        rates = wait_for("rate(shardproxy_requests_total[10s]) > 0",
                         lambda: [s for s in sp_procs.query(
                             prom, "rate(shardproxy_requests_total[10s])")
                             if float(s["value"][1]) > 0])
        assert {s["metric"]["class"] for s in rates} >= {"read", "write"}
        total = sp_procs.query(prom, "sum(rate(shardproxy_requests_total[10s]))")
        assert float(total[0]["value"][1]) > 10
        # Every shard is up, then shard2 dies.
        assert len(sp_procs.query(prom, "shardproxy_backend_up == 1")) == 3
        os.kill(shards[2][0].pid, signal.SIGKILL)
        shards[2][0].wait()
        down = wait_for("shard2 to show as down",
                        lambda: sp_procs.query(prom, 'shardproxy_backend_up{shard="shard2"} == 0'))
        assert down[0]["metric"]["role"] == "primary"
        assert len(sp_procs.query(prom, "shardproxy_backend_up == 1")) == 2
        # Requests to the dead shard are counted as unavailable.
        wait_for("unavailable requests",
                 lambda: sp_procs.query(
                     prom, 'increase(shardproxy_requests_total{result="unavailable"}[10s]) > 0'))

        # The Grafana dashboard: every expression evaluates, every metric is ingested.
        _, exprs = sp_procs.dashboard_exprs()
        names = set()
        for e in exprs:
            sp_procs.query(prom, sp_procs.promql(e))  # raises on a PromQL error
            names |= sp_procs.metric_names(e)
        missing = [n for n in sorted(names)
                   if not sp_procs.query(prom, 'count({__name__="%s"})' % n)]
        assert not missing, "dashboard metrics Prometheus has no series of: %s" % missing
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=15)
    assert not errors or all("shard2" in e or "unavailable" in e for e in errors), errors


def test_example_prometheus_config_is_valid():
    if not os.access(sp_procs.PROMTOOL, os.X_OK):
        pytest.skip("promtool (Debian package prometheus) is not installed")
    path = os.path.join(sp_procs.REPO, "conf", "prometheus.yml")
    out = subprocess.run([sp_procs.PROMTOOL, "check", "config", path], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SUCCESS" in out.stdout + out.stderr
    with open(path) as f:
        text = f.read()
    assert "job_name: shardproxy" in text and "127.0.0.1:9121" in text


SYSTEMD_ANALYZE = "/usr/bin/systemd-analyze"


def test_systemd_unit_verifies_and_its_commands_run():
    binary = os.environ.get("SHARDPROXY_BIN")
    if not binary or not os.access(binary, os.X_OK):
        raise RuntimeError("SHARDPROXY_BIN must name the shardproxy binary")
    with open(os.path.join(sp_procs.REPO, "conf", "shardproxy.service")) as f:
        unit = f.read()
    limit = re.search(r"^LimitNOFILE=(\d+)$", unit, re.M)
    assert limit and int(limit.group(1)) > 100000, "LimitNOFILE above limits.max_clients"
    assert re.search(r"^ExecReload=/bin/kill -HUP \$MAINPID$", unit, re.M)
    assert re.search(r"^Type=notify$", unit, re.M) and re.search(r"^WatchdogSec=", unit, re.M)
    # The unit's commands, with the installed path replaced by the binary under test and the
    # config by conf/proxy.yaml.
    config = os.path.join(sp_procs.REPO, "conf", "proxy.yaml")
    for line in unit.splitlines():
        m = re.match(r"^ExecStart(?:Pre)?=/usr/local/bin/shardproxy (.*)$", line)
        if m:
            args = m.group(1).replace("/etc/shardproxy/proxy.yaml", config).split()
            if "--check-config" in args:
                out = subprocess.run([binary] + args, capture_output=True, text=True, timeout=30)
                assert out.returncode == 0, out.stdout + out.stderr
                assert "configuration OK" in out.stdout
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and re.match(r"^shardproxy \d+\.\d+\.\d+", out.stdout), out
    if not os.access(SYSTEMD_ANALYZE, os.X_OK):
        pytest.skip("systemd-analyze is not installed")
    tmp = tempfile.mkdtemp(prefix="sp-unit-")
    try:
        path = os.path.join(tmp, "shardproxy.service")
        with open(path, "w") as f:
            f.write(unit.replace("/usr/local/bin/shardproxy", binary))
        # Documentation=man:shardproxy(1): verify runs man, which finds the page where an
        # installation puts it (here a MANPATH holding the repository's page).
        os.makedirs(os.path.join(tmp, "man", "man1"))
        shutil.copy(os.path.join(sp_procs.REPO, "docs", "man", "shardproxy.1"),
                    os.path.join(tmp, "man", "man1"))
        out = subprocess.run([SYSTEMD_ANALYZE, "verify", path], capture_output=True, text=True,
                             timeout=60, env=dict(os.environ, MANPATH=os.path.join(tmp, "man")))
        report = out.stdout + out.stderr
        assert out.returncode == 0, report
        # Unknown keys and bad values are only warnings to systemd: fail on them here.
        assert "shardproxy.service:" not in report, report
        # The sandbox: systemd's own exposure rating, below 3.0 ("OK").
        out = subprocess.run([SYSTEMD_ANALYZE, "security", "--offline=true", path],
                             capture_output=True, text=True, timeout=60)
        m = re.search(r"Overall exposure level for shardproxy\.service: (\d+\.\d+)", out.stdout)
        assert m, out.stdout + out.stderr
        assert float(m.group(1)) < 3.0, out.stdout
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
