"""conf/grafana-dashboard.json: it parses, has the panels the operations kit promises (QPS, p99,
errors, shard health, connections), every metric name in its expressions is one a live proxy
exports (checked against a real scrape), and every expression is valid PromQL (promtool check
rules on the expressions as recording rules)."""

import os
import shutil
import subprocess
import tempfile

import pytest
import redis

import sp_procs


@pytest.fixture(scope="module")
def live_scrape():
    tmp = tempfile.mkdtemp(prefix="sp-dash-")
    procs = sp_procs.Processes(tmp)
    try:
        shard_ports = [procs.redis("shard%d" % i)[1] for i in range(2)]
        _, port, metrics = procs.proxy(shard_ports, workers=1)
        r = redis.Redis(host="127.0.0.1", port=port)
        for i in range(50):
            r.set("k%d" % i, i)
            r.get("k%d" % i)
        r.mset({"a": 1, "b": 2, "c": 3})
        status, text = sp_procs.http_get("http://127.0.0.1:%d/metrics" % metrics)
        assert status == 200
        yield text
    finally:
        procs.close()
        shutil.rmtree(tmp, ignore_errors=True)


def test_dashboard_parses_and_has_the_promised_panels():
    dash, exprs = sp_procs.dashboard_exprs()
    assert dash["title"] == "shardproxy"
    assert exprs, "no expressions"
    titles = " | ".join(p["title"] for p in dash["panels"]).lower()
    for want in ("qps", "p99", "error", "shards up", "connections"):
        assert want in titles, (want, titles)
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for p in dash["panels"]:
        if p["type"] != "row":
            assert p["targets"], p["title"]
            assert p["datasource"]["uid"] == "${datasource}", p["title"]


def test_every_metric_in_the_dashboard_is_exported(live_scrape):
    exported = sp_procs.scrape_names(live_scrape)
    assert "shardproxy_requests_total" in exported
    _, exprs = sp_procs.dashboard_exprs()
    used = set()
    for e in exprs:
        names = sp_procs.metric_names(e)
        assert names, "no metric in %r" % e
        used |= names
    missing = sorted(used - exported)
    assert not missing, "the dashboard names metrics the proxy does not export: %s" % missing
    # And the dashboard covers the proxy's main families.
    for family in ("shardproxy_requests_total", "shardproxy_request_duration_seconds_bucket",
                   "shardproxy_backend_up", "shardproxy_client_connections",
                   "shardproxy_backend_errors_total"):
        assert family in used, family


def test_metric_name_extraction():
    e = ('histogram_quantile(0.99, sum by (le, class) (rate(shardproxy_request_duration_seconds'
         '_bucket{instance=~"$instance",x="a{b}"}[$__rate_interval]))) / on (job) up and '
         'process_open_fds offset 5m')
    assert sp_procs.metric_names(e) == {"shardproxy_request_duration_seconds_bucket", "up",
                                        "process_open_fds"}


def test_every_expression_is_valid_promql():
    if not os.access(sp_procs.PROMTOOL, os.X_OK):
        pytest.skip("promtool (Debian package prometheus) is not installed")
    _, exprs = sp_procs.dashboard_exprs()
    tmp = tempfile.mkdtemp(prefix="sp-rules-")
    try:
        path = os.path.join(tmp, "rules.yml")
        with open(path, "w") as f:
            f.write("groups:\n  - name: dashboard\n    rules:\n")
            for i, e in enumerate(exprs):
                f.write("      - record: dashboard:expr%d\n        expr: '%s'\n"
                        % (i, sp_procs.promql(e).replace("'", "''")))
        out = subprocess.run([sp_procs.PROMTOOL, "check", "rules", path], capture_output=True,
                             text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "SUCCESS: %d rules found" % len(exprs) in out.stdout + out.stderr
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
