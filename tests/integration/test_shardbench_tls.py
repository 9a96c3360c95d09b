"""shardbench --tls against a real redis-server that listens on a TLS port only: a test CA and
certificates made with the openssl CLI, a bounded run whose keys are then read back with
redis-cli over TLS, the report and the result file saying TLS, a clear verification error (and
exit 1) for the wrong CA or server name, --tls-skip-verify, a client certificate for a server with
tls-auth-clients yes, and the subcommands that refuse --tls."""

import json
import os
import subprocess

import pytest

import sp_procs

BENCH = os.environ.get("SHARDBENCH_BIN", "")
REDIS_CLI = "/usr/bin/redis-cli"

pytestmark = pytest.mark.skipif(not os.access(BENCH, os.X_OK),
                                reason="SHARDBENCH_BIN must name the shardbench binary")


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True,
                   timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """ca.crt signs server.crt (SAN DNS:localhost, IP:127.0.0.1) and client.crt; other-ca.crt
    is an unrelated CA. Returns {name: path}."""
    d = str(tmp_path_factory.mktemp("pki"))

    def ca(name):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                "/CN=shardbench test " + name, "-keyout", name + ".key", "-out", name + ".crt",
                cwd=d)

    def leaf(name, ext):
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write(ext)
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name, "-keyout",
                name + ".key", "-out", name + ".csr", cwd=d)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                "-CAcreateserial", "-days", "2", "-extfile", name + ".ext", "-out", name + ".crt",
                cwd=d)

    ca("ca")
    ca("other-ca")
    leaf("server", "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                   "extendedKeyUsage=serverAuth\n")
    leaf("client", "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n")
    return {n: os.path.join(d, n) for n in os.listdir(d)}


@pytest.fixture
def procs():
    with sp_procs.running() as p:
        yield p


def tls_redis(procs, pki, auth_clients="no"):
    """A redis-server with only a TLS port (a plaintext client cannot reach it); its port."""
    for _ in range(5):
        port = sp_procs.free_port()
        d = os.path.join(procs.tmp, "redis-tls")
        os.makedirs(d, exist_ok=True)
        p = procs.spawn(["/usr/bin/redis-server", "--port", "0", "--tls-port", str(port),
                         "--bind", "127.0.0.1", "--tls-cert-file", pki["server.crt"],
                         "--tls-key-file", pki["server.key"], "--tls-ca-cert-file", pki["ca.crt"],
                         "--tls-auth-clients", auth_clients, "--save", "", "--appendonly", "no",
                         "--dir", d, "--daemonize", "no"], "redis-tls")
        if sp_procs.wait_for_port(port, p):
            return port
        sp_procs.stop(p)
    raise RuntimeError("redis-server with TLS did not start:\n" + procs.log("redis-tls"))


def cli(pki, port, *args, client_cert=False):
    argv = [REDIS_CLI, "--tls", "--cacert", pki["ca.crt"], "-h", "127.0.0.1", "-p", str(port)]
    if client_cert:
        argv += ["--cert", pki["client.crt"], "--key", pki["client.key"]]
    out = subprocess.run(argv + list(args), capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def run_bench(args, timeout=60):
    proc = subprocess.Popen([BENCH] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        sp_procs.stop(proc)
    return proc.returncode, out, err


# 2000 SETs of 3-byte values over the 100 keys key:000000000000 .. key:000000000099 (the fixed
# seed draws every one of them).
LOAD = ["-h", "127.0.0.1", "-t", "set", "-n", "2000", "-c", "4", "-r", "100", "--no-progress"]


def test_run_over_tls_writes_the_keys(procs, pki, tmp_path):
    port = tls_redis(procs, pki)
    result = str(tmp_path / "run.json")
    rc, out, err = run_bench(LOAD + ["-p", str(port), "--tls", "--cacert", pki["ca.crt"],
                                     "--json-out-file", result])
    assert rc == 0, err + out
    assert "SET: 2000 requests in" in out, out
    header = out.splitlines()
    assert header[0].endswith(", TLS"), header[0]
    assert header[1].startswith("TLS: TLSv1."), header[1]
    assert header[1].endswith(", server certificate verified"), header[1]
    assert "Errors in" not in out

    with open(result) as f:
        run = json.load(f)
    assert run["tls"]["enabled"] is True and run["tls"]["verify"] is True, run["tls"]
    assert run["tls"]["client_cert"] is False
    assert run["tls"]["protocol"].startswith("TLSv1.") and run["tls"]["cipher"], run["tls"]
    row = run["phases"][0]["rows"][0]
    assert row["ops"] == 2000 and row["errors"] == {}, row

    assert cli(pki, port, "DBSIZE") == "100"
    assert cli(pki, port, "GET", "key:000000000000") == "xxx"
    assert cli(pki, port, "GET", "key:000000000099") == "xxx"


def test_pipelined_reads_and_writes_with_verify(procs, pki):
    # Large values and a deep pipeline: records span reads, the socket fills, every GET checked.
    port = tls_redis(procs, pki)
    rc, out, err = run_bench(["-p", str(port), "--tls", "--cacert", pki["ca.crt"], "-t",
                              "set,get", "-d", "100000", "-P", "16", "-c", "4", "-n", "800",
                              "-r", "50", "--verify", "-q", "--no-progress"])
    assert rc == 0, err + out
    assert "Verify: 0 mismatches" in out, out


def test_the_wrong_ca_is_a_verification_error(procs, pki):
    port = tls_redis(procs, pki)
    rc, out, err = run_bench(LOAD + ["-p", str(port), "--tls", "--cacert", pki["other-ca.crt"]])
    assert rc == 1, (rc, out, err)
    assert ("cannot connect to 127.0.0.1:%d: TLS handshake failed: certificate verify failed"
            % port) in err, err
    assert cli(pki, port, "DBSIZE") == "0"


def test_skip_verify_accepts_the_wrong_ca(procs, pki):
    port = tls_redis(procs, pki)
    rc, out, err = run_bench(LOAD + ["-p", str(port), "--tls", "--cacert", pki["other-ca.crt"],
                                     "--tls-skip-verify"])
    assert rc == 0, err + out
    assert "server certificate not verified (--tls-skip-verify)" in out, out
    assert cli(pki, port, "DBSIZE") == "100"


def test_the_server_name_is_verified(procs, pki):
    port = tls_redis(procs, pki)
    base = LOAD + ["-p", str(port), "--tls", "--cacert", pki["ca.crt"]]
    rc, out, err = run_bench(base + ["--sni", "localhost"])  # a DNS name the certificate has
    assert rc == 0, err + out
    rc, out, err = run_bench(base + ["--sni", "redis.invalid"])
    assert rc == 1, (rc, out, err)
    assert "certificate verify failed: hostname mismatch" in err, err


def test_tls_protocols_limits_the_version(procs, pki, tmp_path):
    port = tls_redis(procs, pki)
    result = str(tmp_path / "run.json")
    rc, out, err = run_bench(LOAD + ["-p", str(port), "--tls", "--cacert", pki["ca.crt"],
                                     "--tls-protocols", "TLSv1.2", "--json-out-file", result])
    assert rc == 0, err + out
    with open(result) as f:
        assert json.load(f)["tls"]["protocol"] == "TLSv1.2"


def test_client_certificate(procs, pki):
    port = tls_redis(procs, pki, auth_clients="yes")
    rc, out, err = run_bench(LOAD + ["-p", str(port), "--tls", "--cacert", pki["ca.crt"],
                                     "--cert", pki["client.crt"], "--key", pki["client.key"]])
    assert rc == 0, err + out
    assert out.splitlines()[1].endswith(", client certificate"), out
    assert cli(pki, port, "DBSIZE", client_cert=True) == "100"

    # Without one the server ends the session (in TLS 1.3 after the client's side of the
    # handshake is done): exit 1 and a hint at --cert/--key.
    rc, out, err = run_bench(LOAD + ["-p", str(port), "--tls", "--cacert", pki["ca.crt"]])
    assert rc == 1, (rc, out, err)
    assert "give --cert and --key" in err, err


def test_missing_files_and_plain_ports(procs, pki, tmp_path):
    rc, out, err = run_bench(LOAD + ["-p", "1", "--tls", "--cacert", str(tmp_path / "no.crt")])
    assert rc == 1, (rc, out, err)
    assert "TLS: cannot load CA certificates" in err, err

    # A plaintext server on the other end: a failed or unfinished handshake, never a hang.
    _, plain = procs.redis("plain")
    rc, out, err = run_bench(LOAD + ["-p", str(plain), "--tls", "--cacert", pki["ca.crt"],
                                     "--connect-timeout", "2000"])
    assert rc == 1, (rc, out, err)
    assert "TLS handshake" in err, err


@pytest.mark.parametrize("args", [["--cacert", "ca.crt"], ["--tls-skip-verify"],
                                  ["--cert", "c.crt", "--key", "c.key"]])
def test_tls_flags_need_tls(args):
    rc, out, err = run_bench(["-p", "1"] + args)
    assert rc == 2, (rc, out, err)
    assert "needs --tls" in err, err


@pytest.mark.parametrize("sub", [["matrix"], ["scenario", "x.yaml"]])
def test_subcommands_refuse_tls(sub):
    rc, out, err = run_bench(sub + ["--tls"])
    assert rc == 2, (rc, out, err)
    assert "--tls applies to the run command only" in err, err
