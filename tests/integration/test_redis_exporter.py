"""The Prometheus redis_exporter (Debian's prometheus-redis-exporter) scraping the proxy as it
would scrape a redis-server: every metric it exports for a redis-server it exports for the proxy,
without errors, and the figures are the proxy's real ones (the keys and memory of its shards, the
commands its clients sent, its slow log).

Starts 2 redis-server shards, shardproxy (SHARDPROXY_BIN, 2 workers) and two exporters, one for the
proxy and one for a reference redis-server, all on free loopback ports; every process is stopped by
PID (sp_procs.Processes).
"""

import os
import re
import shutil
import tempfile
import time

import pytest
import redis

from sp_procs import Processes, free_port, http_get, wait_for_port

EXPORTER = shutil.which("prometheus-redis-exporter") or "/usr/bin/prometheus-redis-exporter"
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')


def exporter(procs, name, port):
    """An exporter for the server on `port`; returns its /metrics URL."""
    assert os.access(EXPORTER, os.X_OK), "tools/install-deps.sh installs prometheus-redis-exporter"
    for _ in range(5):
        listen = free_port()
        p = procs.spawn([EXPORTER, "-redis.addr", "redis://127.0.0.1:%d" % port,
                         "-web.listen-address", "127.0.0.1:%d" % listen], name)
        if wait_for_port(listen, p):
            return "http://127.0.0.1:%d/metrics" % listen
    raise RuntimeError("redis_exporter did not start:\n" + procs.log(name))


def scrape(url):
    """{(name, labels): value} of one scrape."""
    status, text = http_get(url)
    assert status == 200
    samples = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = SAMPLE.match(line)
        assert m, line
        samples[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return samples


def value(samples, name, labels=""):
    assert (name, labels) in samples, "%s%s missing" % (name, labels)
    return samples[(name, labels)]


@pytest.fixture(scope="module")
def setup():
    tmp = tempfile.mkdtemp(prefix="sp-exporter-")
    procs = Processes(tmp)
    try:
        shard_ports = [procs.redis("shard%d" % i)[1] for i in range(2)]
        _, reference_port = procs.redis("reference")
        _, port, _ = procs.proxy(shard_ports, workers=2)
        yield {"procs": procs, "port": port, "shard_ports": shard_ports,
               "reference_port": reference_port,
               "proxy_url": exporter(procs, "exporter-proxy", port),
               "reference_url": exporter(procs, "exporter-reference", reference_port)}
    finally:
        procs.close()
        shutil.rmtree(tmp, ignore_errors=True)


def test_the_proxy_exports_what_a_redis_server_exports(setup):
    # Some keys and a slow script on each side, so that keyspace, slow log and latency have data.
    clients = [redis.Redis(host="127.0.0.1", port=p, socket_timeout=30)
               for p in (setup["port"], setup["reference_port"])]
    for c in clients:
        for i in range(50):
            c.set("exp:%d" % i, "v" * i)
        c.eval("local i = 0 while i < 3000000 do i = i + 1 end return 1", 0)
        c.close()
    # The proxy polls its shards' INFO every 2 s: wait (bounded) until the keys show.
    deadline = time.monotonic() + 15
    proxy = scrape(setup["proxy_url"])
    while proxy.get(("redis_db_keys", '{db="db0"}'), 0) < 50 and time.monotonic() < deadline:
        time.sleep(0.25)
        proxy = scrape(setup["proxy_url"])
    reference = scrape(setup["reference_url"])
    proxy_names = {name for name, _ in proxy}
    missing = sorted({name for name, _ in reference} - proxy_names)
    assert missing == [], "exported for redis-server, not for the proxy: %s" % missing
    assert value(proxy, "redis_up") == 1
    assert value(proxy, "redis_exporter_last_scrape_error", '{err=""}') == 0
    # The exporter logs every command the server refused it (LATENCY LATEST, SLOWLOG, ...).
    log = setup["procs"].log("exporter-proxy")
    assert "level=error" not in log and "level=warn" not in log, log


def test_the_figures_are_the_proxys(setup):
    port = setup["port"]
    c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=30)
    c.config_resetstat()
    for i in range(100):
        c.set("fig:%d" % i, "x" * 100)
    for i in range(40):
        c.get("fig:%d" % i)
    c.eval("local i = 0 while i < 3000000 do i = i + 1 end return 1", 0)
    shards = [redis.Redis(host="127.0.0.1", port=p, socket_timeout=10) for p in setup["shard_ports"]]
    keys = sum(s.dbsize() for s in shards)
    used = sum(s.info("memory")["used_memory"] for s in shards)
    # The proxy polls its shards' INFO every 2 s: wait (bounded) until the keys show.
    deadline = time.monotonic() + 15
    while True:
        samples = scrape(setup["proxy_url"])
        if samples.get(("redis_db_keys", '{db="db0"}')) == keys or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert value(samples, "redis_db_keys", '{db="db0"}') == keys
    assert 0.5 * used <= value(samples, "redis_memory_used_bytes") <= 2 * used
    # Counted since CONFIG RESETSTAT, which the proxy applies to its own counters.
    assert value(samples, "redis_commands_total", '{cmd="set"}') == 100
    assert value(samples, "redis_commands_total", '{cmd="get"}') == 40
    assert value(samples, "redis_commands_total", '{cmd="eval"}') == 1
    # ... and the exporter's own commands of each scrape.
    assert value(samples, "redis_commands_processed_total") >= 142
    assert value(samples, "redis_connected_clients") >= 2  # this client and the exporter
    # The slow script is in the proxy's slow log, which SLOWLOG answers from.
    assert value(samples, "redis_slowlog_length") >= 1
    assert value(samples, "redis_last_slow_execution_duration_seconds") > 0.005
    entry = c.slowlog_get(1)[0]
    assert entry["command"] == b"EVAL"
    assert entry["duration"] > 5000
    assert value(samples, "redis_uptime_in_seconds") >= 0
    for s in shards:
        s.close()
    c.close()


def test_latency_latest_merges_the_shards_events(setup):
    shards = [redis.Redis(host="127.0.0.1", port=p, socket_timeout=30) for p in setup["shard_ports"]]
    c = redis.Redis(host="127.0.0.1", port=setup["port"], socket_timeout=30)
    assert c.execute_command("LATENCY", "RESET") >= 0
    for s in shards:
        s.config_set("latency-monitor-threshold", 1)
        s.eval("local i = 0 while i < 3000000 do i = i + 1 end return 1", 0)
    direct = [s.execute_command("LATENCY", "LATEST") for s in shards]
    merged = c.execute_command("LATENCY", "LATEST")
    events = {e[0] for d in direct for e in d}
    assert b"command" in events
    assert sorted(e[0] for e in merged) == sorted(events)  # one entry per event
    for name, stamp, latest, top in merged:
        of_event = [e for d in direct for e in d if e[0] == name]
        newest = max(of_event, key=lambda e: e[1])
        assert stamp == newest[1] and top == max(e[3] for e in of_event)
        assert latest == newest[2] or any(e[1] == stamp and e[2] == latest for e in of_event)
    assert c.execute_command("LATENCY", "RESET") == sum(len(d) for d in direct)
    for s in shards:
        s.config_set("latency-monitor-threshold", 0)
        s.close()
    c.close()
