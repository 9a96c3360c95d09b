// COMMAND, COMMAND COUNT, LIST [FILTERBY ...], INFO, DOCS, GETKEYS, GETKEYSANDFLAGS and HELP,
// answered as redis-server 7.0 answers them, from the generated command table (its COMMAND INFO
// and DOCS bytes, key specs, getkeys functions and ACL categories). Whole lists hold
// redis-server's commands only; the proxy's own PROXY is described when named.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "resp/command_table.h"

namespace sp::session {

// `cmd` is command or one of its subcommands, arity already checked; `resp3`: the client's
// protocol (GETKEYSANDFLAGS' flags are a set in RESP3). Appends the complete reply to *reply.
void commandIntrospection(const resp::CommandInfo& cmd, std::span<const std::string_view> args,
                          bool resp3, std::string* reply);

}  // namespace sp::session
