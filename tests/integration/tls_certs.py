"""Certificates for the TLS integration tests, made with the openssl command in a directory of the
test's own: a CA, a server certificate for localhost (SAN DNS:localhost, IP:127.0.0.1; usable as a
client certificate too, as redis-server presents its one certificate on cluster-bus and replication
links), a client certificate, an unrelated second CA, and on demand a second server certificate
with a serial and CN of its own (for the reload test). P-256 keys: the set takes milliseconds.
Not a test module itself."""

import os
import subprocess

OPENSSL_CNF = """[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
authorityKeyIdentifier = keyid
[client_ext]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
"""


def _openssl(directory, *args):
    r = subprocess.run(["openssl"] + list(args), cwd=directory, capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0:
        raise RuntimeError("openssl %s failed:\n%s%s" % (" ".join(args), r.stdout, r.stderr))


def _key_args(name):
    return ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", name + ".key"]


def make_ca(directory, name, cn, serial):
    _openssl(directory, "req", "-x509", "-new", *_key_args(name), "-days", "2",
             "-config", "openssl.cnf", "-extensions", "ca_ext", "-subj", "/CN=" + cn,
             "-set_serial", str(serial), "-out", name + ".crt")


def make_leaf(directory, name, ca, cn, extensions, serial):
    _openssl(directory, "req", "-new", *_key_args(name), "-config", "openssl.cnf",
             "-subj", "/CN=" + cn, "-out", name + ".csr")
    _openssl(directory, "x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt",
             "-CAkey", ca + ".key", "-set_serial", str(serial), "-days", "2",
             "-extfile", "openssl.cnf", "-extensions", extensions, "-out", name + ".crt")


class Certs:
    """The set in `directory` (created if needed); paths as attributes."""

    def __init__(self, directory):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        with open(self.path("openssl.cnf"), "w") as f:
            f.write(OPENSSL_CNF)
        make_ca(directory, "ca", "shardproxy test CA", 1)
        make_leaf(directory, "server", "ca", "localhost", "server_ext", 2)
        make_leaf(directory, "client", "ca", "shardproxy test client", "client_ext", 3)
        make_ca(directory, "other-ca", "unrelated test CA", 4)
        self.ca = self.path("ca.crt")
        self.server_cert = self.path("server.crt")
        self.server_key = self.path("server.key")
        self.client_cert = self.path("client.crt")
        self.client_key = self.path("client.key")
        self.other_ca = self.path("other-ca.crt")
        self.server_serial = 2

    def path(self, name):
        return os.path.join(self.dir, name)

    def second_server(self, name="server2", cn="localhost-reloaded", serial=22):
        """Another server certificate from the same CA, with its own serial and CN (SAN still
        localhost and 127.0.0.1); returns (cert path, key path, serial)."""
        make_leaf(self.dir, name, "ca", cn, "server_ext", serial)
        return self.path(name + ".crt"), self.path(name + ".key"), serial


def serial_of_der(der):
    """The serial number of a DER certificate (ssl.getpeercert(binary_form=True))."""
    r = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-serial"], input=der,
                       capture_output=True, timeout=30)
    if r.returncode != 0:
        raise RuntimeError("openssl x509 failed: %r" % r.stderr)
    return int(r.stdout.decode().strip().split("=", 1)[1], 16)
