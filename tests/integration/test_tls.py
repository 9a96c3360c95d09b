"""TLS on both sides of the real proxy, with real programs: a TLS listener beside (or instead of)
the plain one, reached with redis-cli --tls, redis-py (ssl=True) and Python's ssl module; client
certificates (tls.auth_clients no / optional / yes); TLS to the shards (backend.tls) with
redis-server --tls-port shards that verify the proxy's client certificate, a wrong CA and a wrong
server name refused with an error reply and verify: false accepting them; certificate reload on
SIGHUP and PROXY RELOAD (new connections get the new certificate, old ones carry on); plaintext
on the TLS port; a silent shard timing out its handshake; BLPOP and SUBSCRIBE (dedicated shard
connections) over TLS; a TLS shard restarted; a missing certificate file at start; a Redis Cluster
and a Sentinel over TLS.

Every certificate is made at test time (tls_certs.py, the openssl command). Starts redis-server,
redis-sentinel and shardproxy (SHARDPROXY_BIN) in a temporary directory on free loopback ports;
every process is stopped by PID (sp_procs.Processes).
"""

import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading

import pytest
import redis

from sp_procs import Processes, free_port, http_get, stop, wait_for, wait_for_port
from tls_certs import Certs, make_leaf, serial_of_der

REDIS_SERVER = "/usr/bin/redis-server"
REDIS_SENTINEL = "/usr/bin/redis-sentinel"


@pytest.fixture(scope="module")
def certs():
    d = tempfile.mkdtemp(prefix="sp-tls-certs-")
    yield Certs(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def procs():
    p = Processes(tempfile.mkdtemp(prefix="sp-tls-"))
    yield p
    p.close()
    shutil.rmtree(p.tmp, ignore_errors=True)


# ---- clients ----

def tls_client(port, certs, client_cert=False, ca=None, **kw):
    """redis-py over TLS to 127.0.0.1:port, verifying the chain and the IP address SAN."""
    extra = {}
    if client_cert:
        extra = {"ssl_certfile": certs.client_cert, "ssl_keyfile": certs.client_key}
    return redis.Redis(host="127.0.0.1", port=port, ssl=True, ssl_ca_certs=ca or certs.ca,
                       ssl_cert_reqs="required", ssl_check_hostname=True, socket_timeout=10,
                       decode_responses=True, **extra, **kw)


def tls_pings(port, certs, client_cert=False):
    try:
        return tls_client(port, certs, client_cert).ping()
    except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError, OSError, ssl.SSLError):
        return False


def cli(port, certs, *args, client_cert=False, tls=True):
    """redis-cli, over TLS unless tls=False; the CompletedProcess."""
    argv = ["redis-cli", "-h", "127.0.0.1", "-p", str(port)]
    if tls:
        argv += ["--tls", "--cacert", certs.ca]
        if client_cert:
            argv += ["--cert", certs.client_cert, "--key", certs.client_key]
    return subprocess.run(argv + [str(a) for a in args], capture_output=True, text=True,
                          timeout=30)


def tls_socket(port, certs, client_cert=False):
    """A verified TLS socket to the proxy (Python's ssl module, hostname localhost)."""
    ctx = ssl.create_default_context(cafile=certs.ca)
    if client_cert:
        ctx.load_cert_chain(certs.client_cert, certs.client_key)
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    return ctx.wrap_socket(raw, server_hostname="localhost")


def command(sock, *args):
    """Sends one command on a raw (TLS) socket and returns its reply, raw: a status, error or
    integer line, or a bulk string (b"$1\r\n1\r\n")."""
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    sock.sendall(out)
    data = b""

    def complete():
        end = data.find(b"\r\n")
        if end < 0:
            return False
        if data[:1] != b"$" or int(data[1:end]) < 0:
            return True
        return len(data) >= end + 2 + int(data[1:end]) + 2
    while not complete():
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def peer_serial(sock):
    return int(sock.getpeercert()["serialNumber"], 16)


# ---- servers ----

def plain_shard(procs, name):
    return procs.redis(name)[1]


def tls_shard(procs, certs, name, auth_clients="yes", extra=()):
    """A redis-server on a TLS port only (--port 0), verifying client certificates; its port."""
    d = os.path.join(procs.tmp, name)
    os.makedirs(d, exist_ok=True)
    for _ in range(5):
        port = free_port()
        p = procs.spawn([REDIS_SERVER, "--port", "0", "--tls-port", str(port),
                         "--bind", "127.0.0.1", "--tls-cert-file", certs.server_cert,
                         "--tls-key-file", certs.server_key, "--tls-ca-cert-file", certs.ca,
                         "--tls-auth-clients", auth_clients, "--save", "", "--appendonly", "no",
                         "--dir", d, "--daemonize", "no"] + list(extra), name)
        if wait_for(lambda: tls_pings(port, certs, client_cert=True) or p.poll() is not None,
                    timeout=15) and p.poll() is None:
            return port
        stop(p)
    raise RuntimeError("TLS redis-server did not start:\n" + procs.log(name))


def shard_dbsize(port, certs):
    r = cli(port, certs, "DBSIZE", client_cert=True)
    assert r.returncode == 0 and r.stdout.strip().isdigit(), r
    return int(r.stdout)


def yaml_str(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def proxy_config(procs, shards=(), plain_port=None, tls_port=None, server=None, backend=None,
                 extra=""):
    """A proxy YAML config: `server` and `backend` are dicts of tls.* and backend.tls.* keys."""
    lines = ["listen:", "  host: 127.0.0.1", "  port: %d" % (plain_port or 0)]
    if shards:
        lines.append("shards:")
        lines += ["  - address: 127.0.0.1:%d" % s for s in shards]
    if tls_port is not None:
        lines += ["tls:", "  listen: %s" % tls_port]
        lines += ["  %s: %s" % (k, yaml_str(v)) for k, v in (server or {}).items()]
    if backend is not None:
        lines += ["backend:", "  tls:", "    enabled: true"]
        for k, v in backend.items():
            lines.append("    %s: %s" % (k, ("true" if v else "false") if isinstance(v, bool)
                                         else yaml_str(v)))
    path = os.path.join(procs.tmp, "proxy-%d.yaml" % len(procs.procs))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n" + extra)
    return path


def server_tls(certs, **more):
    keys = {"cert_file": certs.server_cert, "key_file": certs.server_key}
    keys.update(more)
    return keys


def backend_tls(certs, **more):
    keys = {"ca_cert_file": certs.ca, "cert_file": certs.client_cert,
            "key_file": certs.client_key}
    keys.update(more)
    return keys


def start_proxy(procs, config=None, args=(), name="proxy", plain_port=None, tls_port=None,
                certs=None, client_cert=False):
    """shardproxy with --config and/or flags; waits for each listener named."""
    argv = [os.environ["SHARDPROXY_BIN"], "--workers", "2", "--metrics-listen", "off",
            "--log-level", "info"]
    if config:
        argv += ["--config", config]
    p = procs.spawn(argv + list(args), name)
    if plain_port:
        assert wait_for_port(plain_port, p), procs.log(name)
    if tls_port:
        assert wait_for(lambda: tls_pings(tls_port, certs, client_cert) or p.poll() is not None), \
            procs.log(name)
        assert p.poll() is None, procs.log(name)
    return p


def request_error(client, *args):
    """The error reply a command gets (None when it succeeds)."""
    try:
        client.execute_command(*args)
        return None
    except redis.ResponseError as e:
        return str(e)


# ---- a: TLS and plain listeners ----

def test_tls_and_plain_listeners_side_by_side(procs, certs):
    shards = [plain_shard(procs, "a"), plain_shard(procs, "b")]
    plain, tls = free_port(), free_port()
    start_proxy(procs, proxy_config(procs, shards, plain, tls, server_tls(certs)),
                plain_port=plain, tls_port=tls, certs=certs)

    r = cli(tls, certs, "SET", "cli-key", "over-tls")
    assert (r.returncode, r.stdout) == (0, "OK\n"), r
    r = cli(tls, certs, "GET", "cli-key")
    assert (r.returncode, r.stdout) == (0, "over-tls\n"), r

    over_tls = tls_client(tls, certs)
    over_plain = redis.Redis(port=plain, decode_responses=True)
    for i in range(300):
        (over_tls if i % 2 else over_plain).set("k%d" % i, "v%d" % i)
    expected = ["v%d" % i for i in range(300)]
    assert [over_plain.get("k%d" % i) for i in range(300)] == expected
    assert over_tls.mget(["k%d" % i for i in range(300)]) == expected
    assert over_plain.get("cli-key") == "over-tls"
    r = cli(plain, certs, "GET", "k7", tls=False)
    assert r.stdout == "v7\n", r
    # Keys went to both shards, as over plain TCP.
    sizes = [redis.Redis(port=s).dbsize() for s in shards]
    assert sum(sizes) == 301 and min(sizes) > 100, sizes
    # A large value both ways over TLS (many records).
    big = "x" * (3 << 20)
    over_tls.set("big", big)
    assert over_tls.get("big") == big
    assert over_plain.strlen("big") == len(big)
    # CONFIG GET answers the listener's settings, as redis-server does.
    assert over_plain.config_get("tls-port") == {"tls-port": str(tls)}
    assert over_tls.config_get("tls-cert-file") == {"tls-cert-file": certs.server_cert}
    assert over_tls.config_get("tls-auth-clients") == {"tls-auth-clients": "no"}
    # A pipeline of many commands in one write.
    pipe = over_tls.pipeline(transaction=False)
    for i in range(2000):
        pipe.incr("counter{p}")
    assert pipe.execute()[-1] == 2000



def test_a_tls_only_proxy(procs, certs):
    shards = [plain_shard(procs, "a"), plain_shard(procs, "b")]
    tls = free_port()
    # listen.port 0: no plain listener; tls.listen as "host:port".
    p = start_proxy(procs, proxy_config(procs, shards, 0, "127.0.0.1:%d" % tls,
                                        server_tls(certs)), tls_port=tls, certs=certs)
    c = tls_client(tls, certs)
    assert c.set("only", "tls")
    assert c.get("only") == "tls"
    r = cli(tls, certs, "PING")
    assert r.stdout == "PONG\n", r
    assert p.poll() is None


def test_tls_listen_as_host_and_port_with_flags(procs, certs):
    """The command-line flags, with tls.listen given as host:port."""
    shards = [plain_shard(procs, "a")]
    plain, tls = free_port(), free_port()
    start_proxy(procs, args=["--shards", "127.0.0.1:%d" % shards[0], "--listen", "127.0.0.1",
                             "--port", str(plain), "--tls-listen", "127.0.0.1:%d" % tls,
                             "--tls-cert-file", certs.server_cert, "--tls-key-file",
                             certs.server_key, "--tls-protocols", "TLSv1.2 TLSv1.3"],
                plain_port=plain, tls_port=tls, certs=certs)
    with tls_socket(tls, certs) as s:
        assert command(s, "SET", "f", "1") == b"+OK\r\n"
        assert s.version() in ("TLSv1.2", "TLSv1.3")
    assert redis.Redis(port=plain).get("f") == b"1"


def test_protocols_limit_what_is_accepted(procs, certs):
    shards = [plain_shard(procs, "a")]
    tls = free_port()
    start_proxy(procs, proxy_config(procs, shards, 0, tls, server_tls(certs, protocols="TLSv1.3")),
                tls_port=tls, certs=certs)
    ctx = ssl.create_default_context(cafile=certs.ca)
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        with ctx.wrap_socket(socket.create_connection(("127.0.0.1", tls), timeout=10),
                             server_hostname="localhost") as s:
            command(s, "PING")
    with tls_socket(tls, certs) as s:
        assert s.version() == "TLSv1.3"
        assert command(s, "PING") == b"+PONG\r\n"


def test_a_pipeline_past_the_inflight_limit_over_tls(procs, certs):
    """Reading pauses at limits.max_inflight_per_client with decrypted requests still waiting in
    the TLS channel (many records in one socket read); they are served once replies drain,
    without another byte arriving from the client."""
    shards = [plain_shard(procs, "a"), plain_shard(procs, "b")]
    tls = free_port()
    start_proxy(procs, proxy_config(procs, shards, 0, tls, server_tls(certs),
                                    extra="limits:\n  max_inflight_per_client: 4\n"),
                tls_port=tls, certs=certs)
    c = tls_client(tls, certs)
    pipe = c.pipeline(transaction=False)
    for i in range(5000):
        pipe.set("p%d" % i, "x" * (i % 300))
    assert all(pipe.execute())
    pipe = c.pipeline(transaction=False)
    for i in range(5000):
        pipe.get("p%d" % i)
    assert pipe.execute() == ["x" * (i % 300) for i in range(5000)]


# ---- b: client certificates ----

def test_auth_clients_yes_needs_a_client_certificate(procs, certs):
    shards = [plain_shard(procs, "a")]
    tls = free_port()
    start_proxy(procs, proxy_config(procs, shards, 0, tls,
                                    server_tls(certs, ca_cert_file=certs.ca, auth_clients="yes")),
                tls_port=tls, certs=certs, client_cert=True)
    without = cli(tls, certs, "PING")
    assert without.returncode != 0 or "PONG" not in without.stdout, without
    assert "PONG" not in without.stdout, without
    with pytest.raises((redis.ConnectionError, ssl.SSLError, OSError)):
        tls_client(tls, certs).ping()

    with_cert = cli(tls, certs, "PING", client_cert=True)
    assert (with_cert.returncode, with_cert.stdout) == (0, "PONG\n"), with_cert
    c = tls_client(tls, certs, client_cert=True)
    assert c.set("authed", "1") and c.get("authed") == "1"

    # A certificate from another CA is refused as well.
    other = os.path.join(certs.dir, "other-client")
    if not os.path.exists(other + ".crt"):
        make_leaf(certs.dir, "other-client", "other-ca", "stranger", "client_ext", 99)
    r = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(tls), "--tls", "--cacert",
                        certs.ca, "--cert", other + ".crt", "--key", other + ".key", "PING"],
                       capture_output=True, text=True, timeout=30)
    assert "PONG" not in r.stdout, r


def test_auth_clients_optional(procs, certs):
    shards = [plain_shard(procs, "a")]
    tls = free_port()
    start_proxy(procs, proxy_config(procs, shards, 0, tls,
                                    server_tls(certs, ca_cert_file=certs.ca,
                                               auth_clients="optional")),
                tls_port=tls, certs=certs)
    assert cli(tls, certs, "PING").stdout == "PONG\n"
    assert cli(tls, certs, "PING", client_cert=True).stdout == "PONG\n"


# ---- c, d: TLS to the shards ----

def test_backend_tls_to_verifying_shards(procs, certs):
    shards = [tls_shard(procs, certs, "a"), tls_shard(procs, certs, "b")]
    plain, tls = free_port(), free_port()
    start_proxy(procs, proxy_config(procs, shards, plain, tls, server_tls(certs),
                                    backend_tls(certs)),
                plain_port=plain, tls_port=tls, certs=certs)
    c = redis.Redis(port=plain, decode_responses=True, socket_timeout=10)
    t = tls_client(tls, certs)
    for i in range(400):
        (t if i % 2 else c).set("key:%d" % i, "value:%d" % i)
    sizes = [shard_dbsize(s, certs) for s in shards]
    assert sum(sizes) == 400 and min(sizes) > 100, sizes
    expected = ["value:%d" % i for i in range(400)]
    assert c.mget(["key:%d" % i for i in range(400)]) == expected
    assert [t.get("key:%d" % i) for i in range(400)] == expected
    # What the shard holds, read over its own TLS port.
    r = cli(shards[0], certs, "--scan", client_cert=True)
    some = r.stdout.split()[0]
    assert c.get(some) == "value:" + some.split(":")[1]
    # Values larger than a TLS record, both hops encrypted.
    big = "".join(chr(ord("a") + i % 26) for i in range(2 << 20))
    t.set("big", big)
    assert c.get("big") == big
    assert t.getrange("big", 1 << 20, (1 << 20) + 9) == big[1 << 20:(1 << 20) + 10]
    # The shard saw the proxy's client certificate: it refuses connections without one.
    r = cli(shards[0], certs, "PING")
    assert "PONG" not in r.stdout, r


def test_backend_tls_with_flags_and_server_name(procs, certs):
    shards = [tls_shard(procs, certs, "a"), tls_shard(procs, certs, "b")]
    plain = free_port()
    start_proxy(procs, args=["--shards", ",".join("127.0.0.1:%d" % s for s in shards),
                             "--listen", "127.0.0.1", "--port", str(plain), "--backend-tls",
                             "--backend-tls-ca-cert-file", certs.ca, "--backend-tls-cert-file",
                             certs.client_cert, "--backend-tls-key-file", certs.client_key,
                             "--backend-tls-server-name", "localhost"], plain_port=plain)
    c = redis.Redis(port=plain, decode_responses=True, socket_timeout=10)
    for i in range(100):
        c.set("n%d" % i, i)
    assert c.mget(["n%d" % i for i in range(100)]) == [str(i) for i in range(100)]
    assert sum(shard_dbsize(s, certs) for s in shards) == 100


def test_blocking_pubsub_and_a_restarted_shard_over_tls(procs, certs):
    """The connections the proxy dedicates to a client (BLPOP, SUBSCRIBE) speak TLS to the shard
    too, and a TLS shard killed and started again on its port is reconnected."""
    shard = tls_shard(procs, certs, "a")
    plain, tls = free_port(), free_port()
    start_proxy(procs, proxy_config(procs, [shard], plain, tls, server_tls(certs),
                                    backend_tls(certs)),
                plain_port=plain, tls_port=tls, certs=certs)
    c = tls_client(tls, certs)
    popped = {}
    waiter = threading.Thread(target=lambda: popped.update(v=tls_client(tls, certs)
                                                           .blpop("queue", 20)))
    waiter.start()
    assert wait_for(lambda: "cmd=blpop" in cli(shard, certs, "CLIENT", "LIST",
                                                 client_cert=True).stdout)
    c.lpush("queue", "item")
    waiter.join(30)
    assert popped == {"v": ("queue", "item")}
    sub = tls_client(tls, certs).pubsub()
    sub.subscribe("news")
    assert sub.get_message(timeout=10)["type"] == "subscribe"
    assert c.publish("news", "hello") == 1
    assert sub.get_message(timeout=10)["data"] == "hello"
    sub.close()

    stop(procs.procs[0])
    assert request_error(redis.Redis(port=plain), "GET", "x") is not None
    d = os.path.join(procs.tmp, "a")
    procs.spawn([REDIS_SERVER, "--port", "0", "--tls-port", str(shard), "--bind", "127.0.0.1",
                 "--tls-auth-clients", "yes", "--save", "", "--appendonly", "no", "--dir", d,
                 "--daemonize", "no"] + tls_args(certs), "a-again")
    assert wait_for(lambda: request_error(c, "SET", "x", "1") is None, timeout=30), \
        procs.log("proxy")
    assert cli(shard, certs, "GET", "x", client_cert=True).stdout == "1\n"


def assert_refused(procs, plain, proxy, log_words):
    """Requests through the proxy get error replies (in bounded time, not a hang), the proxy
    stays up, and its log says why."""
    c = redis.Redis(port=plain, decode_responses=True, socket_timeout=15)
    errors = [request_error(c, "SET", "k%d" % i, "v") for i in range(5)]
    assert all(errors), errors
    assert all(w in errors[0].lower() for w in log_words), errors
    assert request_error(c, "GET", "k0") is not None
    assert proxy.poll() is None, procs.log("proxy")
    assert c.ping()  # answered by the proxy itself
    assert wait_for(lambda: all(w in procs.log("proxy").lower() for w in log_words)), \
        procs.log("proxy")


def test_backend_with_the_wrong_ca_is_refused(procs, certs):
    shards = [tls_shard(procs, certs, "a")]
    plain = free_port()
    config = proxy_config(procs, shards, plain,
                          backend=backend_tls(certs, ca_cert_file=certs.other_ca))
    proxy = start_proxy(procs, config, plain_port=plain)
    assert_refused(procs, plain, proxy, ["certificate", "verif"])


def test_backend_server_name_mismatch_and_no_verify(procs, certs):
    shards = [tls_shard(procs, certs, "a")]
    plain = free_port()
    proxy = start_proxy(procs, proxy_config(procs, shards, plain,
                                            backend=backend_tls(certs,
                                                                server_name="wrong.example")),
                        plain_port=plain)
    assert_refused(procs, plain, proxy, ["verif", "hostname mismatch"])
    stop(proxy)

    plain = free_port()
    start_proxy(procs, proxy_config(procs, shards, plain,
                                    backend=backend_tls(certs, server_name="wrong.example",
                                                        verify=False)),
                name="proxy-noverify", plain_port=plain)
    c = redis.Redis(port=plain, decode_responses=True, socket_timeout=10)
    assert c.set("nv", "1") and c.get("nv") == "1"

    # The flag form, with the wrong CA as well.
    plain = free_port()
    start_proxy(procs, args=["--shards", "127.0.0.1:%d" % shards[0], "--listen", "127.0.0.1",
                             "--port", str(plain), "--backend-tls",
                             "--backend-tls-ca-cert-file", certs.other_ca,
                             "--backend-tls-cert-file", certs.client_cert,
                             "--backend-tls-key-file", certs.client_key,
                             "--backend-tls-no-verify"], name="proxy-flags", plain_port=plain)
    c = redis.Redis(port=plain, decode_responses=True, socket_timeout=10)
    assert c.get("nv") == "1"


def test_a_plain_proxy_to_a_tls_shard_fails_cleanly(procs, certs):
    """No backend.tls toward a TLS-only shard: error replies, no hang, no crash."""
    shards = [tls_shard(procs, certs, "a")]
    plain = free_port()
    proxy = start_proxy(procs, proxy_config(procs, shards, plain), plain_port=plain)
    c = redis.Redis(port=plain, decode_responses=True, socket_timeout=15)
    assert request_error(c, "SET", "x", "1") is not None
    assert proxy.poll() is None


def test_backend_tls_toward_a_shard_that_never_answers_times_out(procs, certs):
    """backend.tls toward a listener that accepts and says nothing: the handshake counts under
    backend.connect_timeout_ms, and requests get an error reply in bounded time."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    try:
        plain = free_port()
        proxy = start_proxy(procs, proxy_config(procs, [silent.getsockname()[1]], plain,
                                                backend=backend_tls(certs),
                                                extra="  connect_timeout_ms: 500\n"),
                            plain_port=plain)
        c = redis.Redis(port=plain, decode_responses=True, socket_timeout=15)
        error = request_error(c, "SET", "k", "v")
        assert error is not None and "timeout" in error, error
        assert proxy.poll() is None
    finally:
        silent.close()


# ---- e: reload ----

def reloads(client, field="config_reloads_ok"):
    return int(client.info("stats")[field])


def test_reload_serves_the_new_certificate_to_new_connections(procs, certs):
    shards = [plain_shard(procs, "a")]
    live_crt, live_key = os.path.join(procs.tmp, "live.crt"), os.path.join(procs.tmp, "live.key")
    shutil.copy(certs.server_cert, live_crt)
    shutil.copy(certs.server_key, live_key)
    second_crt, second_key, second_serial = certs.second_server()
    plain, tls = free_port(), free_port()
    proxy = start_proxy(procs, proxy_config(procs, shards, plain, tls,
                                            {"cert_file": live_crt, "key_file": live_key}),
                        plain_port=plain, tls_port=tls, certs=certs)
    admin = redis.Redis(port=plain, decode_responses=True)
    old = tls_socket(tls, certs)
    assert peer_serial(old) == certs.server_serial
    assert command(old, "SET", "old", "1") == b"+OK\r\n"
    before = reloads(admin)

    # Replaced in place (as cert-manager or certbot would), then SIGHUP.
    shutil.copy(second_crt, live_crt)
    shutil.copy(second_key, live_key)
    os.kill(proxy.pid, signal.SIGHUP)
    assert wait_for(lambda: reloads(admin) == before + 1), procs.log("proxy")
    with tls_socket(tls, certs) as fresh:
        assert peer_serial(fresh) == second_serial
        assert serial_of_der(fresh.getpeercert(binary_form=True)) == second_serial
        assert fresh.getpeercert()["subject"] == ((("commonName", "localhost-reloaded"),),)
        assert command(fresh, "GET", "old") == b"$1\r\n1\r\n"
    # The connection made before the reload carries on with its session.
    assert command(old, "SET", "old", "2") == b"+OK\r\n"
    assert command(old, "PING") == b"+PONG\r\n"
    assert peer_serial(old) == certs.server_serial
    r = cli(tls, certs, "GET", "old")
    assert r.stdout == "2\n", r

    # PROXY RELOAD, back to the first certificate.
    shutil.copy(certs.server_cert, live_crt)
    shutil.copy(certs.server_key, live_key)
    assert admin.execute_command("PROXY", "RELOAD") == "OK"
    with tls_socket(tls, certs) as fresh:
        assert peer_serial(fresh) == certs.server_serial

    # A broken certificate file fails the reload whole; the last good one is still served.
    failed = reloads(admin, "config_reloads_failed")
    with open(live_crt, "w") as f:
        f.write("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    os.kill(proxy.pid, signal.SIGHUP)
    assert wait_for(lambda: reloads(admin, "config_reloads_failed") == failed + 1), \
        procs.log("proxy")
    assert wait_for(lambda: live_crt in procs.log("proxy")), procs.log("proxy")
    with tls_socket(tls, certs) as fresh:
        assert peer_serial(fresh) == certs.server_serial
        assert command(fresh, "PING") == b"+PONG\r\n"
    assert command(old, "PING") == b"+PONG\r\n"
    old.close()
    assert proxy.poll() is None


def test_reload_turns_client_certificates_on(procs, certs):
    shards = [plain_shard(procs, "a")]
    plain, tls = free_port(), free_port()
    config = proxy_config(procs, shards, plain, tls, server_tls(certs, ca_cert_file=certs.ca))
    start_proxy(procs, config, plain_port=plain, tls_port=tls, certs=certs)
    old = tls_client(tls, certs)
    assert old.set("before", "1")
    with open(config) as f:
        text = f.read()
    with open(config, "w") as f:
        f.write(text + '  auth_clients: "yes"\n')
    assert redis.Redis(port=plain).execute_command("PROXY", "RELOAD") == b"OK"
    assert "PONG" not in cli(tls, certs, "PING").stdout
    assert cli(tls, certs, "PING", client_cert=True).stdout == "PONG\n"
    assert old.get("before") == "1"  # made before the reload: no certificate asked of it
    assert old.config_get("tls-auth-clients") == {"tls-auth-clients": "yes"}


def test_reload_of_backend_tls_settings(procs, certs):
    """A backend.tls CA fixed by a reload: the shard connections made after it verify."""
    shards = [tls_shard(procs, certs, "a")]
    plain = free_port()
    config = proxy_config(procs, shards, plain,
                          backend=backend_tls(certs, ca_cert_file=certs.other_ca))
    proxy = start_proxy(procs, config, plain_port=plain)
    c = redis.Redis(port=plain, decode_responses=True, socket_timeout=15)
    assert request_error(c, "SET", "r", "1") is not None
    with open(config) as f:
        text = f.read()
    with open(config, "w") as f:
        f.write(text.replace(certs.other_ca, certs.ca))
    assert c.execute_command("PROXY", "RELOAD") == "OK"
    assert wait_for(lambda: request_error(c, "SET", "r", "1") is None, timeout=30), \
        procs.log("proxy")
    assert c.get("r") == "1"
    assert cli(shards[0], certs, "GET", "r", client_cert=True).stdout == "1\n"
    assert proxy.poll() is None


# ---- f: plaintext on the TLS port, a missing file ----

def tls_error_closes(metrics):
    _, text = http_get("http://127.0.0.1:%d/metrics" % metrics)
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("shardproxy_client_connections_closed_total{")
               and 'reason="tls_error"' in line)


def test_plaintext_on_the_tls_port_is_closed(procs, certs):
    shards = [plain_shard(procs, "a")]
    plain, tls, metrics = free_port(), free_port(), free_port()
    proxy = start_proxy(procs, proxy_config(procs, shards, plain, tls, server_tls(certs)),
                        args=["--metrics-listen", "127.0.0.1:%d" % metrics],
                        plain_port=plain, tls_port=tls, certs=certs)
    assert wait_for_port(metrics, proxy), procs.log("proxy")
    assert tls_error_closes(metrics) == 0
    for payload in (b"PING\r\n", b"*1\r\n$4\r\nPING\r\n", b"GET / HTTP/1.1\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", tls), timeout=10) as s:
            s.sendall(payload)
            got = b""
            while True:
                chunk = s.recv(4096)  # a timeout here (socket.timeout) would be a hang
                if not chunk:
                    break
                got += chunk
            assert b"PONG" not in got, got
    # A client that connects and says nothing while another works, and one that disconnects
    # in the middle of the handshake.
    idle = socket.create_connection(("127.0.0.1", tls), timeout=10)
    half = socket.create_connection(("127.0.0.1", tls), timeout=10)
    half.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
    half.close()
    assert proxy.poll() is None, procs.log("proxy")
    assert tls_client(tls, certs).ping()
    assert cli(tls, certs, "PING").stdout == "PONG\n"
    assert redis.Redis(port=plain).ping()
    idle.close()
    # Each refused handshake is counted (the half ClientHello may count as a plain close).
    assert wait_for(lambda: tls_error_closes(metrics) >= 3), procs.log("proxy")
    assert wait_for(lambda: "tls" in procs.log("proxy").lower()), procs.log("proxy")


def start_fails(config, *words):
    """shardproxy started on `config`, and --check-config on it: both exit non-zero at once,
    saying each of `words`."""
    for argv in (["--config", config, "--metrics-listen", "off"], ["--check-config", config]):
        r = subprocess.run([os.environ["SHARDPROXY_BIN"]] + argv, capture_output=True, text=True,
                           timeout=15)
        assert r.returncode != 0, r
        assert all(w in r.stderr + r.stdout for w in words), r


def test_a_missing_certificate_file_fails_at_start(procs, certs):
    shards = [plain_shard(procs, "a")]
    missing = os.path.join(procs.tmp, "no-such-server.crt")
    start_fails(proxy_config(procs, shards, free_port(), free_port(),
                             {"cert_file": missing, "key_file": certs.server_key}), missing)
    # The same for backend.tls files and for a key that does not match.
    start_fails(proxy_config(procs, shards, free_port(),
                             backend=backend_tls(certs, ca_cert_file=missing)), missing)
    start_fails(proxy_config(procs, shards, free_port(), free_port(),
                             server_tls(certs, key_file=certs.client_key)),
                certs.client_key, "does not match")
    # auth_clients without a CA, and an unknown protocol.
    for bad, word in (({"auth_clients": "yes"}, "ca_cert_file"),
                      ({"protocols": "TLSv1.1"}, "TLSv1.1")):
        start_fails(proxy_config(procs, shards, free_port(), free_port(),
                                 server_tls(certs, **bad)), word)


# ---- g: Redis Cluster and Sentinel over TLS ----

def free_cluster_port():
    """A port whose cluster bus port (port + 10000) is free too."""
    for _ in range(100):
        port = free_port()
        if port + 10000 > 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair")


def tls_args(certs):
    return ["--tls-cert-file", certs.server_cert, "--tls-key-file", certs.server_key,
            "--tls-ca-cert-file", certs.ca]


def tls_cluster(procs, certs, masters=3):
    """A Redis Cluster on TLS ports only (cluster bus over TLS too), made with redis-cli --tls
    --cluster create; its ports once every node says cluster_state:ok."""
    ports = []
    for i in range(masters):
        d = os.path.join(procs.tmp, "node%d" % i)
        os.makedirs(d)
        port = free_cluster_port()
        procs.spawn([REDIS_SERVER, "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
                     "--tls-cluster", "yes", "--tls-replication", "yes", "--tls-auth-clients",
                     "yes", "--cluster-enabled", "yes", "--cluster-config-file",
                     os.path.join(d, "nodes.conf"), "--cluster-node-timeout", "2000",
                     "--save", "", "--appendonly", "no", "--dir", d, "--daemonize", "no"]
                    + tls_args(certs), "node%d" % i)
        ports.append(port)
    for i, port in enumerate(ports):
        assert wait_for(lambda: tls_pings(port, certs, client_cert=True)), procs.log("node%d" % i)
    r = subprocess.run(["redis-cli", "--tls", "--cacert", certs.ca, "--cert", certs.client_cert,
                        "--key", certs.client_key, "--cluster", "create"]
                       + ["127.0.0.1:%d" % p for p in ports] + ["--cluster-yes"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr

    def cluster_ok():
        return all("cluster_state:ok" in cli(p, certs, "CLUSTER", "INFO", client_cert=True).stdout
                   for p in ports)
    assert wait_for(cluster_ok, timeout=30)
    return ports


def test_a_redis_cluster_over_tls(procs, certs):
    ports = tls_cluster(procs, certs)
    plain = free_port()
    extra = ("  mode: cluster\n  cluster_seeds: [127.0.0.1:%d]\n" % ports[0])
    config = proxy_config(procs, (), plain, backend=backend_tls(certs))
    with open(config) as f:
        text = f.read()
    with open(config, "w") as f:
        f.write(text.replace("backend:\n", "backend:\n" + extra))
    start_proxy(procs, config, plain_port=plain)
    c = redis.Redis(port=plain, decode_responses=True, socket_timeout=15)
    assert wait_for(lambda: request_error(c, "SET", "probe", "1") is None, timeout=30), \
        procs.log("proxy")
    for i in range(300):
        c.set("ck%d" % i, "cv%d" % i)
    assert c.mget(["ck%d" % i for i in range(300)]) == ["cv%d" % i for i in range(300)]
    sizes = [shard_dbsize(p, certs) for p in ports]
    assert sum(sizes) == 301 and min(sizes) > 50, sizes
    # redis-cli -c, following the cluster's redirects itself over TLS, reads the same values.
    r = subprocess.run(["redis-cli", "-c", "--tls", "--cacert", certs.ca, "--cert",
                        certs.client_cert, "--key", certs.client_key, "-p", str(ports[0]),
                        "GET", "ck42"], capture_output=True, text=True, timeout=30)
    assert r.stdout == "cv42\n", r


def tls_sentinel(procs, certs, master):
    """A redis-sentinel on a TLS port only, monitoring the TLS master as shard0; its port."""
    d = os.path.join(procs.tmp, "sentinel")
    os.makedirs(d)
    sport = free_port()
    conf = os.path.join(d, "sentinel.conf")
    with open(conf, "w") as f:
        f.write("port 0\ntls-port %d\nbind 127.0.0.1\ndir %s\n"
                "tls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\n"
                "tls-replication yes\ntls-auth-clients yes\n"
                "sentinel monitor shard0 127.0.0.1 %d 1\n"
                "sentinel down-after-milliseconds shard0 5000\n"
                % (sport, d, certs.server_cert, certs.server_key, certs.ca, master))
    p = procs.spawn([REDIS_SENTINEL, conf], "sentinel")
    assert wait_for(lambda: tls_pings(sport, certs, client_cert=True)), procs.log("sentinel")
    addr = cli(sport, certs, "SENTINEL", "get-master-addr-by-name", "shard0", client_cert=True)
    assert addr.stdout.split() == ["127.0.0.1", str(master)], addr
    # The sentinel reaches the master over TLS (tls-replication): not flagged disconnected.

    def master_flags():
        lines = cli(sport, certs, "SENTINEL", "MASTER", "shard0", client_cert=True).stdout.split()
        return dict(zip(lines[::2], lines[1::2])).get("flags")
    assert wait_for(lambda: master_flags() == "master"), (master_flags(), procs.log("sentinel"))
    assert p.poll() is None
    return sport


def test_sentinel_over_tls(procs, certs):
    master = tls_shard(procs, certs, "master")
    sport = tls_sentinel(procs, certs, master)
    plain = free_port()
    config = proxy_config(procs, (), plain, backend=backend_tls(certs),
                          extra="shards:\n  - name: shard0\nsentinel:\n"
                                "  addresses: [127.0.0.1:%d]\n" % sport)
    start_proxy(procs, config, plain_port=plain)
    c = redis.Redis(port=plain, decode_responses=True, socket_timeout=15)
    assert wait_for(lambda: request_error(c, "SET", "s", "1") is None, timeout=30), \
        procs.log("proxy")
    assert c.get("s") == "1"
    r = cli(master, certs, "GET", "s", client_cert=True)
    assert r.stdout == "1\n", r
