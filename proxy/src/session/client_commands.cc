// AUTH, HELLO, CLIENT INFO / LIST / KILL / NO-EVICT, CONFIG GET / RESETSTAT.
#include "session/client_commands.h"

#include <arpa/inet.h>
#include <uv.h>

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/ascii.h"
#include "core/clock.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "resp/resp3.h"
#include "session/admin_commands.h"
#include "session/client_session.h"
#include "session/session_checks.h"
#include "session/session_state.h"

namespace sp::session {
namespace {

std::string socketAddress(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = {};
  uint16_t port = 0;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    uv_ip4_name(in, host, sizeof host);
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    uv_ip6_name(in6, host, sizeof host);
    port = ntohs(in6->sin6_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  return "?:0";
}

std::string peerAddress(ClientSession& session) {
  sockaddr_storage addr{};
  int len = sizeof addr;
  if (uv_tcp_getpeername(session.handle(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return "?:0";
  }
  return socketAddress(addr);
}

std::string localAddress(ClientSession& session) {
  sockaddr_storage addr{};
  int len = sizeof addr;
  if (uv_tcp_getsockname(session.handle(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return "?:0";
  }
  return socketAddress(addr);
}

bool parseId(std::string_view text, uint64_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && *out > 0;
}

bool isPubSub(const SessionState* state) {
  return state != nullptr && state->subscriptions() != nullptr &&
         state->subscriptions()->total() > 0;
}

// CLIENT LIST / KILL TYPE: normal, pubsub (master, replica: none through a proxy).
bool typeMatches(std::string_view type, const SessionState* state) {
  if (equalsIgnoreCase(type, "pubsub")) {
    return isPubSub(state);
  }
  if (equalsIgnoreCase(type, "normal")) {
    return !isPubSub(state);
  }
  return false;
}

bool knownType(std::string_view type) {
  for (std::string_view t : {"normal", "pubsub", "master", "replica", "slave"}) {
    if (equalsIgnoreCase(type, t)) {
      return true;
    }
  }
  return false;
}

// CONFIG GET: the parameters answered, from the proxy's configuration.
struct ConfigParam {
  std::string_view name;
  std::string (*value)(const net::Worker& worker);
};

const ConfigParam kConfigParams[] = {
    {"bind", [](const net::Worker& w) { return w.config().listen_host; }},
    {"port", [](const net::Worker& w) { return std::to_string(w.config().listen_port); }},
    {"databases", [](const net::Worker&) { return std::string("1"); }},
    {"maxclients",
     [](const net::Worker& w) {
       // As INFO says: lowered to what the open-files limit allows (net/fd_budget.h).
       return std::to_string(std::min(w.config().limits.max_clients,
                                      w.context().max_clients.load(std::memory_order_relaxed)));
     }},
    {"timeout", [](const net::Worker& w) { return std::to_string(w.config().limits.timeout); }},
    {"tcp-keepalive",
     [](const net::Worker& w) { return std::to_string(w.config().limits.tcp_keepalive); }},
    {"proto-max-bulk-len",
     [](const net::Worker& w) { return std::to_string(w.config().limits.max_bulk_len); }},
    {"cluster-enabled", [](const net::Worker&) { return std::string("no"); }},
    {"slowlog-log-slower-than",
     [](const net::Worker& w) { return std::to_string(w.config().slowlog_threshold_us); }},
    {"slowlog-max-len",
     [](const net::Worker& w) { return std::to_string(w.config().slowlog_max_len); }},
};

void configGet(const net::Worker& worker, std::span<const std::string_view> patterns,
               std::string* reply) {
  std::vector<const ConfigParam*> found;
  for (const ConfigParam& p : kConfigParams) {
    for (std::string_view pattern : patterns) {
      if (globMatch(pattern, p.name)) {
        found.push_back(&p);
        break;
      }
    }
  }
  resp::appendArrayHeader(*reply, static_cast<int64_t>(found.size() * 2));
  for (const ConfigParam* p : found) {
    resp::appendBulk(*reply, p->name);
    resp::appendBulk(*reply, p->value(worker));
  }
}

// CLIENT KILL addr (old form) or CLIENT KILL filter value ... (new form).
void clientKill(ClientSession& self, std::span<const std::string_view> args, std::string* reply,
                bool* close_after) {
  net::Worker& worker = self.worker();
  if (args.size() == 3) {
    for (ClientSession* s : worker.sessions()) {
      if (peerAddress(*s) == args[2]) {
        if (s == &self) {
          *close_after = true;
        } else {
          s->close("killed by CLIENT KILL");
        }
        resp::appendStatus(*reply, "OK");
        return;
      }
    }
    resp::appendError(*reply, "ERR No such client");
    return;
  }
  uint64_t id = 0;
  std::string_view addr, laddr, type, user;
  bool skipme = true;
  if ((args.size() - 2) % 2 != 0) {
    resp::appendError(*reply, "ERR syntax error");
    return;
  }
  for (size_t i = 2; i + 1 < args.size(); i += 2) {
    const std::string_view opt = args[i];
    const std::string_view value = args[i + 1];
    if (equalsIgnoreCase(opt, "id")) {
      if (!parseId(value, &id)) {
        resp::appendError(*reply, "ERR client-id should be greater than 0");
        return;
      }
    } else if (equalsIgnoreCase(opt, "addr")) {
      addr = value;
    } else if (equalsIgnoreCase(opt, "laddr")) {
      laddr = value;
    } else if (equalsIgnoreCase(opt, "type")) {
      if (!knownType(value)) {
        resp::appendError(*reply, "ERR Unknown client type '" + std::string(value) + "'");
        return;
      }
      type = value;
    } else if (equalsIgnoreCase(opt, "user")) {
      user = value;
    } else if (equalsIgnoreCase(opt, "skipme")) {
      if (equalsIgnoreCase(value, "yes")) {
        skipme = true;
      } else if (equalsIgnoreCase(value, "no")) {
        skipme = false;
      } else {
        resp::appendError(*reply, "ERR syntax error");
        return;
      }
    } else {
      resp::appendError(*reply, "ERR syntax error");
      return;
    }
  }
  std::vector<ClientSession*> victims;
  for (ClientSession* s : worker.sessions()) {
    const SessionState* state = s->state();
    if ((id != 0 && s->id() != id) || (!addr.empty() && peerAddress(*s) != addr) ||
        (!laddr.empty() && localAddress(*s) != laddr) ||
        (!type.empty() && !typeMatches(type, state)) ||
        (!user.empty() && (state != nullptr ? state->rights().name : "default") != user) ||
        (skipme && s == &self)) {
      continue;
    }
    victims.push_back(s);
  }
  for (ClientSession* s : victims) {
    if (s == &self) {
      *close_after = true;
    } else {
      s->close("killed by CLIENT KILL");
    }
  }
  resp::appendInteger(*reply, static_cast<int64_t>(victims.size()));
}

void clientList(ClientSession& self, std::span<const std::string_view> args, std::string* reply) {
  std::string_view type;
  std::vector<uint64_t> ids;
  for (size_t i = 2; i < args.size(); ++i) {
    if (equalsIgnoreCase(args[i], "type") && i + 1 < args.size()) {
      type = args[++i];
      if (!knownType(type)) {
        resp::appendError(*reply, "ERR Unknown client type '" + std::string(type) + "'");
        return;
      }
    } else if (equalsIgnoreCase(args[i], "id") && i + 1 < args.size()) {
      while (++i < args.size()) {
        uint64_t id = 0;
        if (!parseId(args[i], &id)) {
          resp::appendError(*reply, "ERR Invalid client ID");
          return;
        }
        ids.push_back(id);
      }
    } else {
      resp::appendError(*reply, "ERR syntax error");
      return;
    }
  }
  std::vector<ClientSession*> sessions(self.worker().sessions().begin(),
                                       self.worker().sessions().end());
  std::sort(sessions.begin(), sessions.end(),
            [](ClientSession* a, ClientSession* b) { return a->id() < b->id(); });
  std::string text;
  for (ClientSession* s : sessions) {
    if ((!type.empty() && !typeMatches(type, s->state())) ||
        (!ids.empty() && std::find(ids.begin(), ids.end(), s->id()) == ids.end())) {
      continue;
    }
    text += ClientCommands::describe(*s);
    text += '\n';
  }
  resp::appendBulk(*reply, text);
}

}  // namespace

std::string ClientCommands::describe(ClientSession& session) {
  const SessionState* state = session.state();
  const Subscriptions* subs = state != nullptr ? state->subscriptions() : nullptr;
  const bool multi = state != nullptr && state->transaction().active;
  std::string flags;
  if (multi) {
    flags += 'x';
  }
  if (isPubSub(state)) {
    flags += 'P';
  }
  if (flags.empty()) {
    flags = "N";
  }
  const uint64_t age_s = (monoMicros() - session.createdMicros()) / 1000000;
  std::string out;
  out += "id=" + std::to_string(session.id());
  out += " addr=" + peerAddress(session);
  out += " laddr=" + localAddress(session);
  uv_os_fd_t fd = -1;
  uv_fileno(reinterpret_cast<uv_handle_t*>(session.handle()), &fd);
  out += " fd=" + std::to_string(fd);
  out += " name=" + session.name();
  const uint64_t now_ms = uv_now(session.worker().loop());
  const uint64_t idle_s =
      now_ms > session.lastActiveMs() ? (now_ms - session.lastActiveMs()) / 1000 : 0;
  out += " age=" + std::to_string(age_s) + " idle=" + std::to_string(idle_s) + " flags=" + flags +
         " db=0";
  out += " sub=" + std::to_string(subs != nullptr ? subs->names(PubSubKind::kChannel).size() : 0);
  out += " psub=" + std::to_string(subs != nullptr ? subs->names(PubSubKind::kPattern).size() : 0);
  out += " ssub=" +
         std::to_string(subs != nullptr ? subs->names(PubSubKind::kShardChannel).size() : 0);
  out += " multi=" + (multi ? std::to_string(state->transaction().queued) : std::string("-1"));
  out += " qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0";
  out += " events=r cmd=NULL user=";
  out += state != nullptr ? state->rights().name : std::string("default");
  out += " redir=-1 resp=";
  out += session.protocol() == resp::Protocol::kResp3 ? '3' : '2';
  return out;
}

std::string_view ClientCommands::proxyConfigKey(std::string_view parameter) {
  static constexpr std::pair<std::string_view, std::string_view> kOwn[] = {
      {"timeout", "limits.timeout"},
      {"tcp-keepalive", "limits.tcp_keepalive"},
      {"maxclients", "limits.max_clients"},
  };
  for (const auto& [name, key] : kOwn) {
    if (equalsIgnoreCase(parameter, name)) {
      return key;
    }
  }
  return {};
}

std::string ClientCommands::helloReply(uint64_t client_id, resp::Protocol protocol) {
  std::string out;
  resp::appendArrayHeader(out, 14);
  resp::appendBulk(out, "server");
  resp::appendBulk(out, "redis");
  resp::appendBulk(out, "version");
  resp::appendBulk(out, resp::CommandTable::redisVersion());
  resp::appendBulk(out, "proto");
  resp::appendInteger(out, static_cast<int64_t>(protocol));
  resp::appendBulk(out, "id");
  resp::appendInteger(out, static_cast<int64_t>(client_id));
  resp::appendBulk(out, "mode");
  resp::appendBulk(out, "standalone");
  resp::appendBulk(out, "role");
  resp::appendBulk(out, "master");
  resp::appendBulk(out, "modules");
  resp::appendArrayHeader(out, 0);
  return protocol == resp::Protocol::kResp3 ? resp::toResp3(out, resp::Resp3Shape::kMap) : out;
}

bool ClientCommands::run(ClientSession& session, const resp::CommandInfo& cmd,
                         std::span<const std::string_view> args, std::string* reply,
                         bool* close_after) {
  const std::string_view name = cmd.name;
  if (name == "client|info") {
    resp::appendBulk(*reply, describe(session) + "\n");
  } else if (name == "client|list") {
    clientList(session, args, reply);
  } else if (name == "client|kill") {
    clientKill(session, args, reply, close_after);
  } else if (name == "client|no-evict") {
    if (equalsIgnoreCase(args[2], "on") || equalsIgnoreCase(args[2], "off")) {
      resp::appendStatus(*reply, "OK");
    } else {
      resp::appendError(*reply, "ERR syntax error");
    }
  } else if (name == "config|get") {
    configGet(session.worker(), args.subspan(2), reply);
  } else if (name == "config|resetstat") {
    resp::appendStatus(*reply, "OK");
  } else {
    return false;
  }
  return true;
}

// ---- SessionState: AUTH and HELLO ----

void SessionState::answerAuth(const resp::CommandInfo& cmd, bool failed, std::string_view answer) {
  net::Worker& w = worker();
  const uint64_t delay_ms = authDelayMs(auth_failures_);
  if (failed) {
    ++auth_failures_;
    w.stats().auth_failures.add();
    if (w.logLimiter().allow()) {
      // The address and the count only: a user name may be a mistyped password.
      spdlog::warn("worker {}: client {} ({}) failed to authenticate ({} on this connection{})",
                   w.index(), clientId(), peerAddress(session_), auth_failures_,
                   delay_ms > 0 ? ", answered after " + std::to_string(delay_ms) + " ms" : "");
    }
  }
  if (delay_ms == 0) {
    if (failed) {
      refuse(answer);
    } else {
      reply(answer);
    }
    return;
  }
  // A success is as late as a failure, or its speed would tell the guess was right.
  PendingRequest* request = session_.deferReply(&cmd);
  auth_answer_late_ = true;
  w.replyLater(request, delay_ms, std::string(answer));
}

SessionState::Verdict SessionState::onAuth(const resp::RequestFrame& frame,
                                           const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  if (args.size() > 3) {
    refuse("-ERR syntax error\r\n");
    return Verdict::kHandled;
  }
  const std::string_view user = args.size() == 3 ? args[1] : std::string_view();
  UserRights rights;
  const AuthOutcome outcome = authenticate(worker().config().auth, user, args.back(), &rights);
  if (outcome != AuthOutcome::kOk) {
    // Never the password; the user name only at debug level.
    spdlog::debug("worker {}: client {} AUTH failed for user '{}'", worker().index(), clientId(),
                  user.empty() ? std::string_view("default") : user);
    answerAuth(cmd, true, authError(outcome));
    return Verdict::kHandled;
  }
  authenticatedAs(rights);
  answerAuth(cmd, false, "+OK\r\n");
  return Verdict::kHandled;
}

SessionState::Verdict SessionState::onHello(const resp::RequestFrame& frame,
                                            const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  resp::Protocol protocol = session_.protocol();  // HELLO without a version keeps it
  if (args.size() >= 2) {
    int64_t version = 0;
    const auto [end, ec] =
        std::from_chars(args[1].data(), args[1].data() + args[1].size(), version);
    if (ec != std::errc() || end != args[1].data() + args[1].size()) {
      refuse("-ERR Protocol version is not an integer or out of range\r\n");
      return Verdict::kHandled;
    }
    if (version < 2 || version > 3) {
      refuse("-NOPROTO unsupported protocol version\r\n");
      return Verdict::kHandled;
    }
    protocol = version == 3 ? resp::Protocol::kResp3 : resp::Protocol::kResp2;
  }
  std::string_view user;
  std::string_view password;
  std::string_view setname;
  bool auth = false;
  bool has_name = false;
  for (size_t i = 2; i < args.size(); ++i) {
    const size_t more = args.size() - i - 1;
    if (equalsIgnoreCase(args[i], "auth") && more >= 2) {
      user = args[i + 1];
      password = args[i + 2];
      auth = true;
      i += 2;
    } else if (equalsIgnoreCase(args[i], "setname") && more >= 1) {
      setname = args[i + 1];
      has_name = true;
      i += 1;
    } else {
      refuse("-ERR Syntax error in HELLO option '" + std::string(args[i].substr(0, 64)) + "'\r\n");
      return Verdict::kHandled;
    }
  }
  if (auth) {
    UserRights rights;
    const AuthOutcome outcome = authenticate(worker().config().auth, user, password, &rights);
    if (outcome != AuthOutcome::kOk) {
      answerAuth(cmd, true, authError(AuthOutcome::kWrongPass));
      return Verdict::kHandled;
    }
    authenticatedAs(rights);
  }
  if (!authenticated_) {
    refuse(
        "-NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
        "select the RESP protocol version at the same time\r\n");
    return Verdict::kHandled;
  }
  if (has_name) {
    for (char c : setname) {
      if (c < '!' || c > '~') {
        constexpr std::string_view kBadName =
            "-ERR Client names cannot contain spaces, newlines or special characters.\r\n";
        if (auth) {
          answerAuth(cmd, false, kBadName);
        } else {
          refuse(kBadName);
        }
        return Verdict::kHandled;
      }
    }
    session_.setName(setname);
  }
  // The reply is already in the new protocol, as redis-server sends it. A connection held for
  // WATCH switches with the client (inside MULTI, HELLO is refused).
  session_.setProtocol(protocol);
  if (pinned_ != nullptr) {
    pinned_->switchProtocol(protocol);
  }
  if (auth) {
    answerAuth(cmd, false, ClientCommands::helloReply(clientId(), protocol));
  } else {
    reply(ClientCommands::helloReply(clientId(), protocol));
  }
  return Verdict::kHandled;
}

}  // namespace sp::session
