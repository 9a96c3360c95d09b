"""tools/bench-report-publish.py publishes measurements only: results of `--scale quick` (a smoke
test, not a measurement) are refused with a message naming them and nothing is written, unless
--allow-quick asks for a preview; full-scale results still publish, and repeated ones say how
their spreads read. The page states where the proxy, the shards and the client ran, and
its hand-written sections follow the reproduced tables."""

import json
import os
import shutil
import subprocess

import pytest

from sp_procs import REPO

PUBLISH = os.path.join(REPO, "tools", "bench-report-publish.py")


def publish(tmp_path, results, *extra):
    docs = tmp_path / "docs" / "benchmarks.md"
    readme = tmp_path / "README.md"
    readme.write_text("# t\n<!-- bench:begin -->\nstale\n<!-- bench:end -->\n", encoding="utf-8")
    out = subprocess.run(
        ["/usr/bin/python3", PUBLISH, "--results", str(results), "--docs", str(docs),
         "--charts", str(tmp_path / "docs" / "benchmarks"), "--readme", str(readme), *extra],
        capture_output=True, text=True, timeout=60, cwd=REPO)
    return out, docs, readme


def matrix_result(root, scale, with_scale_field=True, repeat=None):
    """A minimal `shardbench matrix` result directory, as matrix_report.cc writes it."""
    d = root / "matrix"
    d.mkdir(parents=True)
    suffix = " (quick smoke test, not a measurement)" if scale == "quick" else ""
    results = {"tool": "shardbench", "kind": "matrix", "format": 1,
               "command_line": "shardbench matrix" + (" --scale full" if scale == "full" else ""),
               "wall_s": 1.0, "nproc": 2, "cells": [{"status": "ok"}]}
    if with_scale_field:
        results["scale"] = scale
    if repeat is not None:
        results["repeat"] = repeat
    (d / "results.json").write_text(json.dumps(results), encoding="utf-8")
    (d / "report.md").write_text(
        "# Proxy workers × shards: SET and GET requests per second%s\n\n- **command**: x\n\n"
        "## SET requests per second%s\n\n| a |\n|---|\n| 1 |\n" % (suffix, suffix),
        encoding="utf-8")
    return d


@pytest.mark.parametrize("with_scale_field", [True, False], ids=["scale", "command-line"])
def test_quick_results_are_refused(tmp_path, with_scale_field):
    matrix_result(tmp_path / "results", "quick", with_scale_field)
    out, docs, readme = publish(tmp_path, tmp_path / "results")
    assert out.returncode != 0, out.stdout + out.stderr
    assert "refusing to publish quick results" in out.stderr, out.stderr
    assert "matrix" in out.stderr and "--scale full" in out.stderr, out.stderr
    assert not docs.exists()
    assert "stale" in readme.read_text(encoding="utf-8")


def test_allow_quick_previews_the_layout(tmp_path):
    matrix_result(tmp_path / "results", "quick")
    out, docs, _ = publish(tmp_path, tmp_path / "results", "--allow-quick")
    assert out.returncode == 0, out.stderr
    assert "quick smoke test, not a measurement" in docs.read_text(encoding="utf-8")


def test_full_results_publish(tmp_path):
    matrix_result(tmp_path / "results", "full")
    out, docs, _ = publish(tmp_path, tmp_path / "results")
    assert out.returncode == 0, out.stderr
    assert "| full |" in docs.read_text(encoding="utf-8")
    # One repetition (or results from before --repeat): no claim about spreads.
    assert "within noise" not in docs.read_text(encoding="utf-8")


def test_repeated_results_explain_the_spread(tmp_path):
    matrix_result(tmp_path / "results", "full", repeat=3)
    out, docs, _ = publish(tmp_path, tmp_path / "results")
    assert out.returncode == 0, out.stderr
    text = docs.read_text(encoding="utf-8")
    assert "median and (min–max) of the repetitions" in text, text
    assert "CPU budget" in text, text


def test_a_real_quick_matrix_run_is_refused(tmp_path):
    """The result directory shardbench itself writes at the quick scale (one small cell)."""
    bench = os.environ.get("SHARDBENCH_BIN")
    proxy = os.environ.get("SHARDPROXY_BIN")
    if not bench or not proxy or not shutil.which("redis-server"):
        pytest.skip("needs SHARDBENCH_BIN, SHARDPROXY_BIN and redis-server")
    out_dir = tmp_path / "results" / "matrix"
    run = subprocess.run(
        [bench, "matrix", "--shards", "2", "--workers", "1", "-n", "1000", "-c", "10",
         "--time-limit", "3", "--proxy-bin", proxy, "--out", str(out_dir)],
        capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    # The terminal gets progress, a summary and the report's path, not the 170-column report.
    assert "report: " in run.stdout and "| Proxy workers |" not in run.stdout, run.stdout
    # Nothing pinned, one repetition: the summary says both.
    assert "1 repetition per cell; CPU budget: unpinned: " in run.stdout, run.stdout
    assert (out_dir / "matrix-set-quick.svg").exists()
    out, docs, _ = publish(tmp_path, tmp_path / "results")
    assert out.returncode != 0, out.stdout + out.stderr
    assert "refusing to publish quick results" in out.stderr, out.stderr
    assert not docs.exists()


def test_pinning_is_stated_and_hand_written_sections_follow_the_tables(tmp_path):
    d = matrix_result(tmp_path / "results", "full", repeat=3)
    j = json.loads((d / "results.json").read_text(encoding="utf-8"))
    j["cpu_budget"] = {"text": "proxy: CPU 0; shards: CPU 1; client: CPU 1"}
    (d / "results.json").write_text(json.dumps(j), encoding="utf-8")
    docs_path = tmp_path / "docs" / "benchmarks.md"
    docs_path.parent.mkdir(parents=True)
    docs_path.write_text("old\n<!-- bench:manual:begin -->\n## Mine\n<!-- bench:manual:end -->\n",
                         encoding="utf-8")
    out, docs, readme = publish(tmp_path, tmp_path / "results")
    assert out.returncode == 0, out.stderr
    text = docs.read_text(encoding="utf-8")
    assert "every run pinned as proxy: CPU 0; shards: CPU 1; client: CPU 1" in text
    assert "on the same CPUs" not in text
    assert text.index("## SET requests per second") < text.index("## Mine")
    assert "every run pinned as proxy: CPU 0" in readme.read_text(encoding="utf-8")
