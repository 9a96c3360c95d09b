// Certificates for the TLS tests, made at test time with the openssl command into a temporary
// directory (removed at exit): a CA, a server certificate for localhost (SAN DNS:localhost and
// IP:127.0.0.1), a client certificate signed by the same CA, and a second, unrelated CA with a
// server certificate of its own. P-256 keys, so the whole set takes a few milliseconds.
#pragma once

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sp::tls::testing {

struct TestCerts {
  std::string dir;
  std::string error;  // why the set could not be made ("" when it was)

  std::string path(const std::string& name) const { return dir + "/" + name; }
  std::string caCert() const { return path("ca.crt"); }
  std::string serverCert() const { return path("server.crt"); }
  std::string serverKey() const { return path("server.key"); }
  std::string clientCert() const { return path("client.crt"); }
  std::string clientKey() const { return path("client.key"); }
  std::string otherCaCert() const { return path("other-ca.crt"); }
  std::string otherServerCert() const { return path("other-server.crt"); }
  std::string otherServerKey() const { return path("other-server.key"); }

  ~TestCerts() {
    if (!dir.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
};

namespace detail {

inline constexpr const char* kOpensslConfig = R"([req]
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
)";

// Runs one openssl command in `dir`; false with its output in *error on failure.
inline bool openssl(const std::string& dir, const std::string& args, std::string* error) {
  const std::string log = dir + "/openssl.log";
  const std::string cmd = "cd '" + dir + "' && openssl " + args + " >'" + log + "' 2>&1";
  if (std::system(cmd.c_str()) == 0) {
    return true;
  }
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  *error = "openssl " + args + " failed:\n" + text.str();
  return false;
}

inline bool makeCa(const std::string& dir, const std::string& name, const std::string& cn,
                   int serial, std::string* error) {
  return openssl(dir,
                 "req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2"
                 " -config openssl.cnf -extensions ca_ext -subj '/CN=" +
                     cn + "' -set_serial " + std::to_string(serial) + " -keyout " + name +
                     ".key -out " + name + ".crt",
                 error);
}

inline bool makeLeaf(const std::string& dir, const std::string& name, const std::string& ca,
                     const std::string& cn, const std::string& extensions, int serial,
                     std::string* error) {
  return openssl(dir,
                 "req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
                 " -config openssl.cnf -subj '/CN=" +
                     cn + "' -keyout " + name + ".key -out " + name + ".csr",
                 error) &&
         openssl(dir,
                 "x509 -req -in " + name + ".csr -CA " + ca + ".crt -CAkey " + ca +
                     ".key -set_serial " + std::to_string(serial) +
                     " -days 2 -extfile openssl.cnf -extensions " + extensions + " -out " + name +
                     ".crt",
                 error);
}

inline void makeAll(TestCerts* certs) {
  char tmpl[] = "/tmp/sp-tls-test-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    certs->error = "mkdtemp failed";
    return;
  }
  certs->dir = tmpl;
  std::ofstream(certs->path("openssl.cnf")) << kOpensslConfig;
  const std::string& d = certs->dir;
  std::string* e = &certs->error;
  (void)(makeCa(d, "ca", "shardproxy test CA", 1, e) &&
         makeLeaf(d, "server", "ca", "localhost", "server_ext", 2, e) &&
         makeLeaf(d, "client", "ca", "shardproxy test client", "client_ext", 3, e) &&
         makeCa(d, "other-ca", "unrelated test CA", 4, e) &&
         makeLeaf(d, "other-server", "other-ca", "localhost", "server_ext", 5, e));
}

}  // namespace detail

// The set, made once per process.
inline const TestCerts& testCerts() {
  static TestCerts certs;
  static const bool made = (detail::makeAll(&certs), true);
  (void)made;
  return certs;
}

}  // namespace sp::tls::testing
