"""Logs and the pidfile as an operator uses them: --log-file / log.file, --pidfile / pidfile,
rotation by the real logrotate with the shipped conf/shardproxy.logrotate (its postrotate sends
SIGUSR1 through the pidfile), and clear errors for paths that cannot be written.

Starts a redis-server shard and shardproxy (SHARDPROXY_BIN) on free loopback ports; every process
is stopped by PID (sp_procs.Processes).
"""

import os
import shutil
import signal
import subprocess
import tempfile

import pytest
import redis

from sp_procs import REPO, Processes, free_port, stop, wait_for, wait_for_port

LOGROTATE = shutil.which("logrotate") or "/usr/sbin/logrotate"


@pytest.fixture
def procs():
    p = Processes(tempfile.mkdtemp(prefix="sp-logging-"))
    yield p
    p.close()


def read(path):
    with open(path) as f:
        return f.read()


def start_proxy(procs, shard_port, extra):
    binary = os.environ["SHARDPROXY_BIN"]
    port = free_port()
    p = procs.spawn([binary, "--port", str(port), "--workers", "1",
                     "--shards", "127.0.0.1:%d" % shard_port, "--metrics-listen", "off"] + extra,
                    "proxy")
    assert wait_for_port(port, p), procs.log("proxy")
    return p, port


def test_log_file_pidfile_and_rotation_by_logrotate(procs):
    assert os.access(LOGROTATE, os.X_OK), "tools/install-deps.sh installs logrotate"
    _, shard = procs.redis("s0")
    log = os.path.join(procs.tmp, "log", "shardproxy.log")
    pidfile = os.path.join(procs.tmp, "run", "shardproxy.pid")
    os.makedirs(os.path.dirname(log))
    os.makedirs(os.path.dirname(pidfile))
    proxy, port = start_proxy(procs, shard, ["--log-file", log, "--pidfile", pidfile])

    assert read(pidfile) == "%d\n" % proxy.pid
    assert wait_for(lambda: "listening on 127.0.0.1:%d" % port in read(log)), read(log)
    assert "listening on" not in procs.log("proxy")  # the file, not stderr

    # The shipped snippet, pointed at this test's files, run by the real logrotate.
    conf = read(os.path.join(REPO, "conf", "shardproxy.logrotate"))
    conf = conf.replace("/var/log/shardproxy/shardproxy.log", log)
    conf = conf.replace("/run/shardproxy/shardproxy.pid", pidfile)
    conf_path = os.path.join(procs.tmp, "logrotate.conf")
    with open(conf_path, "w") as f:
        f.write(conf)
    out = subprocess.run([LOGROTATE, "-f", "-s", os.path.join(procs.tmp, "logrotate.state"),
                          conf_path], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    rotated = log + ".1"  # delaycompress: the newest rotation stays plain
    assert os.path.exists(rotated)
    assert "listening on" in read(rotated)
    assert wait_for(lambda: os.path.exists(log) and "log file reopened" in read(log)), \
        procs.log("proxy")
    assert "listening on" not in read(log)

    # New lines go to the new file.
    os.kill(proxy.pid, signal.SIGHUP)  # a reload without --config: logged as an error
    assert wait_for(lambda: "reload (SIGHUP)" in read(log)), read(log)
    assert "reload (SIGHUP)" not in read(rotated)

    stop(proxy)
    assert proxy.returncode == 0
    assert not os.path.exists(pidfile)  # removed on a clean exit
    assert "shardproxy stopped" in read(log)


def test_yaml_keys_and_unwritable_paths(procs):
    _, shard = procs.redis("s0")
    log = os.path.join(procs.tmp, "yaml.log")
    pidfile = os.path.join(procs.tmp, "yaml.pid")
    config = os.path.join(procs.tmp, "proxy.yaml")
    with open(config, "w") as f:
        f.write("log:\n  level: debug\n  file: %s\npidfile: %s\n" % (log, pidfile))
    proxy, port = start_proxy(procs, shard, ["--config", config])
    assert read(pidfile) == "%d\n" % proxy.pid
    assert wait_for(lambda: "[debug]" in read(log)), read(log)
    assert redis.Redis(port=port).execute_command("PROXY", "CONFIG", "GET", "log.file") == [
        b"log.file", log.encode()]
    stop(proxy)

    binary = os.environ["SHARDPROXY_BIN"]
    missing = os.path.join(procs.tmp, "no-such-dir", "x")
    for flag in ("--log-file", "--pidfile"):
        out = subprocess.run([binary, "--port", str(free_port()), "--shards",
                              "127.0.0.1:%d" % shard, "--metrics-listen", "off", flag, missing],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 1, (flag, out)
        assert missing + ": No such file or directory" in out.stderr, (flag, out.stderr)
