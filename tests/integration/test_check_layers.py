"""tools/check-layers.py, the layer check tools/test.sh runs: clean on this tree, and failing on a
copy of the tree that gains an upward include, loses a listed one, or grows an unplaced folder."""

import os
import shutil
import subprocess

import pytest

from sp_procs import REPO

SCRIPT = os.path.join(REPO, "tools", "check-layers.py")


def run(root):
    out = subprocess.run(["/usr/bin/python3", SCRIPT, "--root", root], capture_output=True,
                         text=True, timeout=60)
    return out.returncode, out.stdout + out.stderr


@pytest.fixture
def tree(tmp_path):
    """A copy of proxy/src, bench/src and the exceptions file."""
    root = tmp_path / "repo"
    for sub in ("proxy/src", "bench/src"):
        shutil.copytree(os.path.join(REPO, sub), root / sub)
    (root / "tools").mkdir()
    shutil.copy(os.path.join(REPO, "tools", "layer-exceptions.txt"), root / "tools")
    return root


def test_this_tree_is_clean():
    rc, out = run(REPO)
    assert rc == 0, out
    assert "check-layers: clean" in out


@pytest.mark.parametrize("path, include, message", [
    ("proxy/src/resp/encoder.h", "session/client_session.h",
     "includes session/client_session.h (session/ is above this layer)"),
    ("proxy/src/core/buffer.h", "metrics/hot_counter.h",
     "includes metrics/hot_counter.h (metrics/ is above this layer)"),
    ("proxy/src/backend/backend_conn.h", "session/client_session.h",
     "includes session/client_session.h (session/ is above this layer)"),
])
def test_an_upward_include_fails(tree, path, include, message):
    source = tree / path
    source.write_text(source.read_text() + f'\n#include "{include}"\n')
    rc, out = run(str(tree))
    assert rc == 1, out
    assert f"{path}:" in out and message in out, out


def test_bench_uses_core_resp_and_tls_only(tree):
    source = tree / "bench/src/main.cc"
    source.write_text('#include "route/router.h"\n' + source.read_text())
    rc, out = run(str(tree))
    assert rc == 1, out
    assert "bench/src/main.cc:1: includes route/router.h" in out


def test_a_listed_upward_include_passes_and_a_stale_listing_fails(tree):
    exceptions = tree / "tools/layer-exceptions.txt"
    source = tree / "proxy/src/net/worker.h"
    source.write_text(source.read_text() + '\n#include "session/pending_request.h"\n')
    exceptions.write_text(exceptions.read_text() +
                          "proxy/src/net/worker.h: session/pending_request.h\n")
    rc, out = run(str(tree))
    assert rc == 0, out
    assert "1 known upward include(s) still listed" in out, out
    # The include goes, the listing stays: the list must shrink with the code.
    source.write_text(source.read_text().replace('#include "session/pending_request.h"', ""))
    rc, out = run(str(tree))
    assert rc == 1, out
    assert ("lists 'proxy/src/net/worker.h: session/pending_request.h', which no longer includes "
            "it") in out


def test_a_folder_outside_the_order_fails(tree):
    (tree / "proxy/src/extra").mkdir()
    (tree / "proxy/src/extra/x.h").write_text('#include "core/buffer.h"\n')
    rc, out = run(str(tree))
    assert rc == 1, out
    assert "proxy/src/extra/ has no place in the layer order" in out


def test_downward_and_own_folder_includes_pass(tree):
    header = tree / "proxy/src/session/client_session.h"
    header.write_text(header.read_text() + '\n#include "route/router.h"\n'
                      '#include "session/fanout.h"\n')
    rc, out = run(str(tree))
    assert rc == 0, out
