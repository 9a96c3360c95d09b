"""shardbench --print-percentiles and --hdr-file-prefix against a real redis-server: one table
per command with non-decreasing latencies, and one HdrHistogram .hgrm file per command that a
small parser of the plotter's format reads back (header, monotone rows, 100% last, footer)."""

import os
import re
import subprocess

import pytest

import sp_procs

BENCH = os.environ.get("SHARDBENCH_BIN", "")

pytestmark = pytest.mark.skipif(not os.access(BENCH, os.X_OK),
                                reason="SHARDBENCH_BIN must name the shardbench binary")

HEADER = "       Value     Percentile TotalCount 1/(1-Percentile)"
ROW = re.compile(r"^ *(\d+\.\d{3}) (\d\.\d{12}) +(\d+)(?: +(\d+\.\d{2}))?$")
MEAN = re.compile(r"^#\[Mean    = +(\d+\.\d{3}), StdDeviation   = +(\d+\.\d{3})\]$")
MAX = re.compile(r"^#\[Max     = +(\d+\.\d{3}), Total count    = +(\d+)\]$")
BUCKETS = re.compile(r"^#\[Buckets = +(\d+), SubBuckets     = +(\d+)\]$")


def parse_hgrm(text):
    """(rows as (value_ms, percentile, total_count, inverse or None), footer dict)."""
    lines = text.split("\n")
    assert lines[0] == HEADER, lines[0]
    assert lines[1] == ""
    rows, footer = [], {}
    for line in lines[2:]:
        if not line:
            continue
        m = ROW.match(line)
        if m:
            assert not footer, "row after the footer: %r" % line
            inv = float(m.group(4)) if m.group(4) is not None else None
            rows.append((float(m.group(1)), float(m.group(2)), int(m.group(3)), inv))
            continue
        for name, rx in (("mean", MEAN), ("max", MAX), ("buckets", BUCKETS)):
            m = rx.match(line)
            if m:
                footer[name] = m.groups()
                break
        else:
            raise AssertionError("unparseable .hgrm line: %r" % line)
    return rows, footer


def parse_tables(stdout):
    """{command: (requests, max_ms, [(percentile, latency_ms)])} from the percentile tables."""
    tables = {}
    current = None
    for line in stdout.splitlines():
        m = re.match(r"^(\S+) latency percentiles: (\d+) requests, max (\d+\.\d+) ms$", line)
        if m:
            current = []
            tables[m.group(1)] = (int(m.group(2)), float(m.group(3)), current)
            continue
        if current is None:
            continue
        if line.strip() == "Percentile    Latency (ms)":
            continue
        m = re.match(r"^ +(\d+(?:\.\d+)?)% +(\d+\.\d{5})$", line)
        if m:
            current.append((float(m.group(1)), float(m.group(2))))
        else:
            current = None
    return tables


@pytest.fixture
def redis_port():
    with sp_procs.running() as procs:
        _, port = procs.redis("redis")
        yield port


def run_bench(args, timeout=60):
    proc = subprocess.Popen([BENCH] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        sp_procs.stop(proc)
    return proc.returncode, out, err


def test_tables_and_hgrm_files(redis_port, tmp_path):
    prefix = str(tmp_path / "x")
    rc, out, err = run_bench(["-p", str(redis_port), "-t", "set,get", "-n", "3000", "-c", "10",
                              "-r", "1000", "--print-percentiles", "99.9,50,99",
                              "--hdr-file-prefix", prefix, "--no-progress"])
    assert rc == 0, err + out

    tables = parse_tables(out)
    assert sorted(tables) == ["GET", "SET"], out
    for name, (requests, max_ms, rows) in tables.items():
        assert requests == 3000, name
        assert [p for p, _ in rows] == [50.0, 99.0, 99.9], out
        latencies = [v for _, v in rows]
        assert latencies == sorted(latencies), (name, latencies)
        assert 0 < latencies[0] and latencies[-1] <= max_ms, (name, latencies, max_ms)

    assert sorted(os.listdir(tmp_path)) == ["x_GET.hgrm", "x_SET.hgrm", "x_percentiles.svg"]
    for name in ("SET", "GET"):
        with open("%s_%s.hgrm" % (prefix, name)) as f:
            rows, footer = parse_hgrm(f.read())
        assert len(rows) > 10, rows
        assert rows[0][1] == 0.0
        values = [r[0] for r in rows]
        levels = [r[1] for r in rows]
        counts = [r[2] for r in rows]
        assert values == sorted(values)
        assert counts == sorted(counts)
        assert all(a < b for a, b in zip(levels, levels[1:])), levels
        # 1/(1-p) on every row but the last, which is 100% with every request.
        assert all(r[3] is not None and abs(r[3] - 1 / (1 - r[1])) < 0.01 * r[3] + 0.01
                   for r in rows[:-1])
        assert rows[-1][1] == 1.0 and rows[-1][3] is None and rows[-1][2] == 3000
        # The footer: the max is the 100% row's value; total count; HdrHistogram's layout.
        assert float(footer["max"][0]) == rows[-1][0]
        assert int(footer["max"][1]) == 3000
        assert footer["buckets"] == ("36", "256")
        mean, stddev = (float(v) for v in footer["mean"])
        assert 0 < mean <= rows[-1][0] and stddev >= 0
        # The table's max (exact) lies in the last bucket: at most the bucket top, within 1%.
        table_max = tables[name][1]
        assert rows[-1][0] * 0.99 - 0.001 <= table_max <= rows[-1][0] + 0.001
    with open(prefix + "_percentiles.svg") as f:
        svg = f.read()
    assert "<svg" in svg and ">99.99%<" in svg and "SET" in svg and "GET" in svg


@pytest.mark.parametrize("bad", ["50,abc", "0", "100.5", "50,,99", "-1", "1e2"])
def test_malformed_list_is_rejected_before_connecting(bad):
    # Port 1: nothing listens there, so an accepted list would fail differently (exit 1).
    rc, out, err = run_bench(["-p", "1", "--print-percentiles", bad])
    assert rc == 2, (rc, out, err)
    assert "--print-percentiles" in err and bad in err, err
    assert out == ""
