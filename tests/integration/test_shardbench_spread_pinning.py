"""shardbench matrix and scenario with --repeat 2 and CPU pinning, against redis-server shards and
the shardproxy that shardbench starts itself: the report shows every cell's median with its
min-max range (tables, SVG whiskers and heat-map lines, every repetition in results.json), the
servers and the client threads really run on the CPUs given (read from /proc while the run goes),
the CPU budget is stated in report.md, results.json and on the terminal, and a budget where two
parts share a CPU is warned about. Bad CPU lists are refused before anything starts."""

import json
import os
import re
import shutil
import subprocess
import threading
import time

import pytest

BENCH = os.environ.get("SHARDBENCH_BIN", "")
PROXY = os.environ.get("SHARDPROXY_BIN", "")
CPUS = sorted(os.sched_getaffinity(0))

pytestmark = pytest.mark.skipif(
    not os.access(BENCH, os.X_OK) or not os.access(PROXY, os.X_OK)
    or not shutil.which("redis-server"),
    reason="needs SHARDBENCH_BIN, SHARDPROXY_BIN and redis-server")

needs_two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs to pin parts apart")

# A min-max range after a median: "12345 (11000–13000)".
SPREAD = re.compile(r"\d+ \(\d+\u2013\d+\)")

SCENARIO = """
name: spread
title: Spread and pinning
seed: {file: 000_none.txt, section: "a test of shardbench itself"}
args: -t set,get -r 100 -d 16 --threads 1
sweep:
  title: Connections
  args: -c {value}
  values: [2, 4]
scales:
  quick: {args: -n 1500}
  full: {args: -n 1500}
tables:
  - title: SET requests per second
    row: SET
    metric: qps
  - title: GET by connections
    layout: rows
    items: sweep
    row: GET
    columns:
      - {title: GET requests/s, metric: qps}
    chart: {kind: bar, column: 0}
"""


class AffinityWatch:
    """Reads Cpus_allowed_list of shardbench's threads and of the servers it started (its child
    processes by comm, not the --version and --help probes) every 10 ms while it runs:
    {"thread": set of lists, "redis-server": ..., "shardproxy": ...}, and that of its main
    thread. A child seen between fork and exec is still called "shardbench"."""

    def __init__(self, proc):
        self.proc = proc
        self.seen = {}
        self.main = None
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def allowed(self, path):
        try:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if line.startswith("Cpus_allowed_list:"):
                        return line.split(":", 1)[1].strip()
        except OSError:
            return None
        return None

    def loop(self):
        pid = self.proc.pid
        while self.proc.poll() is None:
            try:
                tasks = os.listdir("/proc/%d/task" % pid)
            except OSError:
                break
            for tid in tasks:
                cpus = self.allowed("/proc/%d/task/%s/status" % (pid, tid))
                if cpus is None:
                    continue
                if tid == str(pid):
                    self.main = cpus
                else:
                    self.seen.setdefault("thread", set()).add(cpus)
                try:
                    with open("/proc/%d/task/%s/children" % (pid, tid), encoding="utf-8") as f:
                        children = f.read().split()
                except OSError:
                    children = []
                for child in children:
                    try:
                        with open("/proc/%s/comm" % child, encoding="utf-8") as f:
                            name = f.read().strip()
                        with open("/proc/%s/cmdline" % child, "rb") as f:
                            argv = f.read().split(b"\0")
                    except OSError:
                        continue
                    if argv == [b""] or b"--version" in argv or b"--help" in argv:
                        continue  # a probe of the binary's version or flags (or a zombie)
                    cpus = self.allowed("/proc/%s/status" % child)
                    if cpus is not None:
                        self.seen.setdefault(name, set()).add(cpus)
            time.sleep(0.01)

    def join(self):
        self.thread.join(timeout=5)


def run_watched(args, timeout):
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watch = AffinityWatch(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()  # this process only, by its PID; its servers die with it (PDEATHSIG)
        out, err = proc.communicate()
        pytest.fail("shardbench did not finish in %d s:\n%s" % (timeout, err[-3000:]))
    watch.join()
    return proc.returncode, out, err, watch


def check_pinned(watch, proxy_cpu, shard_cpu, client_cpu):
    assert watch.seen.get("redis-server") == {str(shard_cpu)}, watch.seen
    assert watch.seen.get("shardproxy") == {str(proxy_cpu)}, watch.seen
    # The client threads ran on the client's CPU; the main thread (which starts the servers)
    # stayed unpinned, so no server inherited the client's CPU.
    assert str(client_cpu) in watch.seen.get("thread", set()), watch.seen
    assert watch.main is not None and watch.main != str(client_cpu), watch.main


@needs_two_cpus
def test_matrix_repeats_pins_and_reports_the_spread_and_budget(tmp_path):
    proxy_cpu, shared = CPUS[0], CPUS[1]
    out_dir = tmp_path / "matrix"
    rc, out, err, watch = run_watched(
        [BENCH, "matrix", "--shards", "2", "--workers", "1", "-n", "4000", "-c", "8",
         "--time-limit", "3", "--repeat", "2", "--proxy-cpus", str(proxy_cpu),
         "--shard-cpus", str(shared), "--client-cpus", str(shared), "--proxy-bin", PROXY,
         "--out", str(out_dir)], timeout=90)
    assert rc == 0, out + err
    check_pinned(watch, proxy_cpu, shared, shared)

    budget = "proxy: CPU %d; shards: CPU %d; client: CPU %d" % (proxy_cpu, shared, shared)
    warning = "the shards and the client share CPU %d" % shared
    # The terminal summary.
    assert "2 repetitions per cell; CPU budget: " + budget in out, out
    assert "warning: " + warning in out, out
    assert re.search(r"(best|highest) SET( median)?: " + SPREAD.pattern, out), out

    report = (out_dir / "report.md").read_text(encoding="utf-8")
    assert "- **CPU budget**: " + budget + "\n" in report, report
    assert "- **warning**: " + warning in report, report
    assert "- **repetitions**: 2 per cell" in report, report
    set_row = re.search(r"^\| 2 shards \| (.*) \|$", report, re.M)
    assert set_row and SPREAD.fullmatch(set_row.group(1)), report

    svg = (out_dir / "matrix-set-quick.svg").read_text(encoding="utf-8")
    assert "under a value: min\u2013max of the repetitions" in svg, svg
    assert re.search(r'<text class="range"[^>]*>[0-9.]+k?\u2013[0-9.]+k?</text>', svg), svg
    assert "CPU budget: proxy: CPU %d;" % proxy_cpu in svg

    results = json.loads((out_dir / "results.json").read_text(encoding="utf-8"))
    assert results["repeat"] == 2
    assert results["cpu_budget"]["text"] == budget
    assert results["cpu_budget"]["warnings"] == [warning]
    cell = results["cells"][0]
    values = [r["set_qps"] for r in cell["reps"]]
    assert len(values) == 2 and all(v > 0 for v in values), cell
    assert cell["set_qps_min"] == min(values) and cell["set_qps_max"] == max(values), cell
    assert cell["set_qps_min"] <= cell["set_qps"] <= cell["set_qps_max"], cell


@needs_two_cpus
def test_scenario_repeats_pins_and_reports_the_spread_and_budget(tmp_path):
    scenario = tmp_path / "spread.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    proxy_cpu, shared = CPUS[0], CPUS[1]
    out_dir = tmp_path / "scenario"
    rc, out, err, watch = run_watched(
        [BENCH, "scenario", str(scenario), "--local-shards", "1", "--with-direct",
         "--repeat", "2", "--proxy-cpus", str(proxy_cpu), "--shard-cpus", str(shared),
         "--client-cpus", str(shared), "--proxy-bin", PROXY, "--out", str(out_dir)], timeout=90)
    assert rc == 0, out + err
    check_pinned(watch, proxy_cpu, shared, shared)
    budget = "proxy: CPU %d; shards: CPU %d; client: CPU %d" % (proxy_cpu, shared, shared)
    warning = "the shards and the client share CPU %d" % shared
    assert "CPU budget: " + budget in err, err
    assert "warning: " + warning in err, err

    report = (out_dir / "report.md").read_text(encoding="utf-8")
    assert report == out  # the terminal gets report.md
    assert "- **CPU budget**: " + budget + "\n" in report, report
    assert "- **warning**: " + warning in report, report
    assert "2 repetitions (median)" in report
    # --proxy-cpus 1 CPU: one worker by default.
    assert "shardproxy --workers 1" in report, report
    ours = re.search(r"^\| shardproxy \(this machine\) \| (.*) \| (.*) \|$", report, re.M)
    assert ours and SPREAD.fullmatch(ours.group(1)) and SPREAD.fullmatch(ours.group(2)), report
    # redis-server against shardproxy: a ratio, said to be within noise when the ranges overlap.
    direct = re.search(r"^\| redis-server \(this machine\) \| (.*) \| (.*) \|$", report, re.M)
    assert direct, report
    for cell in direct.groups():
        m = re.fullmatch(SPREAD.pattern + r" \((within noise, )?(\d+\.\d\d)\u00d7\)", cell)
        assert m, cell

    for chart in ("1-set-qps-quick.svg", "2-get-requests-s-quick.svg"):
        svg = (out_dir / chart).read_text(encoding="utf-8")
        assert "whiskers: min\u2013max of the repetitions" in svg, chart
        assert '<g class="range"' in svg, chart

    results = json.loads((out_dir / "results.json").read_text(encoding="utf-8"))
    assert results["repeat"] == 2
    assert results["cpu_budget"]["warnings"] == [warning]
    spreads = results["tables"][0]["spreads"]
    assert {(s["target"], s["item"]) for s in spreads} == {
        (t, p) for t in ("shardproxy", "redis-server") for p in ("2", "4")}, spreads
    for s in spreads:
        assert len(s["values"]) == 2 and s["min"] <= s["median"] <= s["max"], s
    reps = [m["rep"] for m in results["measurements"]]
    assert sorted(reps) == [1] * 4 + [2] * 4, reps


@pytest.mark.parametrize("flag,value,message", [
    ("--proxy-cpus", "1-", "invalid CPU list '1-'"),
    ("--shard-cpus", "2-1", "invalid CPU list '2-1'"),
    ("--client-cpus", "0,,1", "invalid CPU list '0,,1'"),
    ("--client-cpus", str(max(CPUS) + 1), "is not available here"),
])
@pytest.mark.parametrize("command", ["matrix", "scenario"])
def test_bad_cpu_lists_are_refused_before_anything_starts(tmp_path, command, flag, value,
                                                          message):
    args = [BENCH, command]
    if command == "scenario":
        args.append(os.path.join(os.path.dirname(__file__), "..", "..", "conf", "scenarios",
                                 "kuaijie-connections.yaml"))
    run = subprocess.run(args + [flag, value, "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 2, run.stdout + run.stderr
    assert flag in run.stderr and message in run.stderr, run.stderr
    assert not (tmp_path / "out").exists()


def test_external_servers_cannot_be_pinned(tmp_path):
    run = subprocess.run([BENCH, "matrix", "--proxy", "2x1=127.0.0.1:1", "--proxy-cpus",
                          str(CPUS[0])],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "pin only servers shardbench starts" in run.stderr, run.stderr
