"""The Debian package as an operator installs it: CPack builds it from the build under test
(the one whose shardproxy is SHARDPROXY_BIN), dpkg installs it into a fresh root (its own
database, maintainer scripts run with DPKG_ROOT so they leave the host alone), and the installed
tree holds the binaries, the man pages, the configuration as a conffile, the logrotate snippet
and a systemd unit whose paths are the installed ones; then dpkg removes it and keeps the
conffiles. The Depends line comes from the libraries the binaries link (dpkg-shlibdeps).
"""

import os
import re
import shutil
import subprocess
import tempfile

import pytest

from sp_procs import build_dir

SYSTEMD_ANALYZE = "/usr/bin/systemd-analyze"
RUNTIME_LIBS = ["libuv1", "liburing2", "libhiredis0.14", "libyaml-cpp0.7", "libspdlog1.10",
                "libprometheus-cpp-core1.0", "libcivetweb1", "libsystemd0", "libssl3"]


def run(argv, **kw):
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kw)
    assert out.returncode == 0, "%s:\n%s%s" % (" ".join(argv), out.stdout, out.stderr)
    return out.stdout


@pytest.fixture(scope="module")
def package():
    build = build_dir()
    tmp = tempfile.mkdtemp(prefix="sp-package-")
    try:
        run(["cpack", "-G", "DEB", "--config", os.path.join(build, "CPackConfig.cmake"),
             "-B", os.path.join(tmp, "out")])
        debs = [f for f in os.listdir(os.path.join(tmp, "out")) if f.endswith(".deb")]
        assert len(debs) == 1, debs
        yield tmp, os.path.join(tmp, "out", debs[0])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_control_fields_and_dependencies(package):
    _, deb = package
    info = run(["dpkg-deb", "--field", deb, "Package", "Version", "Section", "Depends"])
    assert re.search(r"^Package: shardproxy$", info, re.M), info
    assert re.search(r"^Version: \d+\.\d+\.\d+$", info, re.M), info
    depends = re.search(r"^Depends: (.*)$", info, re.M).group(1)
    for lib in RUNTIME_LIBS:
        assert re.search(r"(^|, )%s[ ,(-]" % re.escape(lib), depends + ","), (lib, depends)
    control = run(["dpkg-deb", "--info", deb])
    for script in ("postinst", "prerm", "postrm", "conffiles"):
        assert script in control, control


def test_installs_into_a_fresh_root_and_removes_cleanly(package):
    tmp, deb = package
    root = os.path.join(tmp, "root")
    for d in ("var/lib/dpkg/info", "var/lib/dpkg/updates"):
        os.makedirs(os.path.join(root, d))
    open(os.path.join(root, "var/lib/dpkg/status"), "w").close()
    dpkg = ["dpkg", "--root=" + root, "--force-depends", "--force-script-chrootless"]
    run(dpkg + ["-i", deb])
    assert "Status: install ok installed" in run(["dpkg", "--root=" + root, "-s", "shardproxy"])

    def path(p):
        return os.path.join(root, p.lstrip("/"))

    for f in ("/usr/bin/shardproxy", "/usr/bin/shardbench"):
        assert os.access(path(f), os.X_OK), f
    assert run([path("/usr/bin/shardproxy"), "--version"]).startswith("shardproxy ")
    assert run([path("/usr/bin/shardbench"), "--help"]).startswith("Usage: shardbench")
    for page in ("shardproxy", "shardbench"):
        text = run(["man", "-l", path("/usr/share/man/man1/%s.1" % page)],
                   env=dict(os.environ, MANWIDTH="100"))
        text = re.sub(".\x08", "", text)  # overstrike bold
        assert "NAME" in text and "SYNOPSIS" in text and page in text, text
    config = path("/etc/shardproxy/proxy.yaml")
    assert "configuration OK" in run([path("/usr/bin/shardproxy"), "--check-config", config])
    assert os.path.exists(path("/etc/logrotate.d/shardproxy"))
    assert os.path.exists(path("/usr/share/doc/shardproxy/operations.md"))
    conffiles = run(["dpkg-query", "--admindir=" + path("/var/lib/dpkg"), "-W",
                     "-f=${Conffiles}", "shardproxy"])
    assert "/etc/shardproxy/proxy.yaml" in conffiles and "/etc/logrotate.d/shardproxy" in conffiles

    with open(path("/usr/lib/systemd/system/shardproxy.service")) as f:
        unit = f.read()
    assert re.search(r"^ExecStart=/usr/bin/shardproxy --config /etc/shardproxy/proxy.yaml$",
                     unit, re.M), unit
    assert re.search(r"^ExecStartPre=/usr/bin/shardproxy --check-config "
                     r"/etc/shardproxy/proxy.yaml$", unit, re.M), unit
    assert re.search(r"^Documentation=man:shardproxy\(1\) "
                     r"file:///usr/share/doc/shardproxy/operations.md$", unit, re.M), unit
    if os.access(SYSTEMD_ANALYZE, os.X_OK):
        # The installed unit, its paths pointed into the fresh root, and the installed man page.
        host_unit = os.path.join(tmp, "shardproxy.service")
        with open(host_unit, "w") as f:
            f.write(unit.replace("/usr/bin/", path("/usr/bin/")).replace(
                "/etc/shardproxy/", path("/etc/shardproxy/")))
        run([SYSTEMD_ANALYZE, "verify", host_unit],
            env=dict(os.environ, MANPATH=path("/usr/share/man")))

    run(dpkg + ["-r", "shardproxy"])
    assert not os.path.exists(path("/usr/bin/shardproxy"))
    assert not os.path.exists(path("/usr/lib/systemd/system/shardproxy.service"))
    assert os.path.exists(config), "remove keeps the conffiles (purge deletes them)"
    run(dpkg + ["-P", "shardproxy"])
    assert not os.path.exists(config)
