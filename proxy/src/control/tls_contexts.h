// The TLS contexts a configuration asks for: the listener's (tls.*) and the shards' (backend.tls).
// Built at start-up and on every reload, which re-reads the certificate files.
#pragma once

#include <memory>
#include <string>

#include "config/config.h"
#include "core/status.h"
#include "tls/tls_context.h"

namespace sp::control {

struct TlsContexts {
  std::shared_ptr<const tls::TlsContext> server;   // nullptr: no TLS listener
  std::shared_ptr<const tls::TlsContext> backend;  // nullptr: plain connections to the shards
};

// Fails ("tls: cannot load certificate /etc/...: ...") when a file or setting is bad.
Status buildTlsContexts(const config::Config& config, TlsContexts* out);

}  // namespace sp::control
