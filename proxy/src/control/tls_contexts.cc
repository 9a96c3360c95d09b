// TLS contexts from the config.
#include "control/tls_contexts.h"

namespace sp::control {

Status buildTlsContexts(const config::Config& config, TlsContexts* out) {
  TlsContexts built;
  if (config.tls_port != 0) {
    if (Status made = tls::TlsContext::makeServer(config.tls_server, &built.server); !made.ok()) {
      return made.within("tls");
    }
  }
  if (config.backend_tls) {
    if (Status made = tls::TlsContext::makeClient(config.backend_tls_client, &built.backend);
        !made.ok()) {
      return made.within("backend.tls");
    }
  }
  *out = std::move(built);
  return Status();
}

}  // namespace sp::control
