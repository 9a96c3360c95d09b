// TLS contexts from the config.
#include "control/tls_contexts.h"

namespace sp::control {

bool buildTlsContexts(const config::Config& config, TlsContexts* out, std::string* error) {
  TlsContexts built;
  std::string why;
  if (config.tls_port != 0) {
    built.server = tls::TlsContext::makeServer(config.tls_server, &why);
    if (built.server == nullptr) {
      *error = "tls: " + why;
      return false;
    }
  }
  if (config.backend_tls) {
    built.backend = tls::TlsContext::makeClient(config.backend_tls_client, &why);
    if (built.backend == nullptr) {
      *error = "backend.tls: " + why;
      return false;
    }
  }
  *out = std::move(built);
  return true;
}

}  // namespace sp::control
