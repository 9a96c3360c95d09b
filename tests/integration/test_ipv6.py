"""IPv6 loopback on both sides, with the real programs: shardproxy listens on [::1] and reaches
shards that listen only on [::1]; redis-py connects over IPv6. What CLIENT INFO, CLIENT LIST,
CLIENT KILL ADDR and the slow log say of an IPv6 client is compared with what redis-server says of
its own IPv6 client: "[::1]:port", brackets included.

Starts redis-server shards and shardproxy (SHARDPROXY_BIN) in a temporary directory, on free
ports of ::1 only; every process is stopped by PID (sp_procs.Processes).
"""

import os
import re
import socket
import tempfile

import pytest
import redis

from sp_procs import Processes, free_port, listens_on, wait_for

IPV6_ADDR = re.compile(r"^\[::1\]:[1-9][0-9]*$")


def ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback (::1) here")


@pytest.fixture
def procs():
    p = Processes(tempfile.mkdtemp(prefix="sp-ipv6-"))
    yield p
    p.close()


def fields(line):
    return dict(f.split("=", 1) for f in line.strip().split(" "))


def started(procs, argv, name, port):
    """Spawns argv; True once the process itself listens on port (it exits if the port is taken,
    and the caller tries another)."""
    proc = procs.spawn(argv, name)
    return proc if wait_for(lambda: proc.poll() is not None or listens_on(proc.pid, port)) and \
        proc.poll() is None else None


def ipv6_redis(procs, name):
    d = os.path.join(procs.tmp, name)
    os.makedirs(d, exist_ok=True)
    for _ in range(5):
        port = free_port()
        if started(procs, ["/usr/bin/redis-server", "--port", str(port), "--bind", "::1",
                           "--save", "", "--appendonly", "no", "--dir", d, "--daemonize", "no"],
                   name, port):
            return port
    raise RuntimeError("redis-server did not start on ::1:\n" + procs.log(name))


def test_clients_and_shards_over_ipv6(procs):
    a, b = ipv6_redis(procs, "a"), ipv6_redis(procs, "b")
    config = os.path.join(procs.tmp, "proxy.yaml")
    with open(config, "w") as f:
        f.write("slowlog:\n  threshold_us: 0\n")  # every request is in the slow log
    for _ in range(5):
        port = free_port()
        if started(procs, [os.environ["SHARDPROXY_BIN"], "--config", config, "--listen", "::1",
                           "--port", str(port), "--workers", "2", "--metrics-listen", "off",
                           "--shards", "[::1]:%d,[::1]:%d" % (a, b), "--log-level", "info"],
                   "proxy", port):
            break
    else:
        raise RuntimeError("shardproxy did not start on ::1:\n" + procs.log("proxy"))

    client = redis.Redis(host="::1", port=port, decode_responses=True)
    for i in range(200):
        client.set("k%d" % i, "v%d" % i)
    assert [client.get("k%d" % i) for i in range(200)] == ["v%d" % i for i in range(200)]
    sizes = [redis.Redis(host="::1", port=p).dbsize() for p in (a, b)]
    assert sum(sizes) == 200 and min(sizes) > 50, sizes
    # Nothing listens on 127.0.0.1 at that port: the proxy bound ::1 only.
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()

    # CLIENT INFO as redis-server answers its own IPv6 client.
    mine = fields(client.execute_command("CLIENT", "INFO"))
    theirs = fields(redis.Redis(host="::1", port=a, decode_responses=True)
                    .execute_command("CLIENT", "INFO"))
    assert IPV6_ADDR.match(theirs["addr"]) and theirs["laddr"] == "[::1]:%d" % a, theirs
    assert IPV6_ADDR.match(mine["addr"]) and mine["laddr"] == "[::1]:%d" % port, mine

    # CLIENT LIST names the same address, and CLIENT KILL ADDR and LADDR find clients by it.
    other = redis.Redis(host="::1", port=port, decode_responses=True)

    def listed():
        return [fields(line)["addr"] for line in other.execute_command("CLIENT", "LIST")
                .splitlines()]

    assert mine["addr"] in listed()
    assert other.execute_command("CLIENT", "KILL", "ADDR", mine["addr"]) == 1
    assert wait_for(lambda: mine["addr"] not in listed()), listed()
    third = redis.Redis(host="::1", port=port, decode_responses=True)
    third_addr = fields(third.execute_command("CLIENT", "INFO"))["addr"]
    assert IPV6_ADDR.match(third_addr) and third_addr in listed()
    assert other.execute_command("CLIENT", "KILL", "LADDR", "[::1]:%d" % port, "SKIPME",
                                 "yes") == 1
    assert wait_for(lambda: third_addr not in listed()), listed()

    # The slow log names the client the same way.
    other.execute_command("CLIENT", "SETNAME", "six")
    other.get("k1")
    me = fields(other.execute_command("CLIENT", "INFO"))["addr"]
    entries = other.execute_command("SLOWLOG", "GET", "-1")
    named = [e for e in entries if e[5] == "six"]
    assert named and all(e[4] == me for e in named), entries
    assert IPV6_ADDR.match(me), me
