// AUTH, HELLO, CLIENT INFO / LIST / KILL / NO-EVICT, CONFIG GET (config_commands.h).
#include "session/client_commands.h"

#include <arpa/inet.h>
#include <uv.h>

#include <cstring>

#include <algorithm>
#include <charconv>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/ascii.h"
#include "core/assert.h"
#include "core/clock.h"
#include "net/socket_address.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "resp/errors.h"
#include "resp/reply_reader.h"
#include "resp/resp3.h"
#include "session/admin_commands.h"
#include "session/client_session.h"
#include "session/config_commands.h"
#include "session/session_checks.h"
#include "session/session_state.h"
#include "session/worker_clients.h"

namespace sp::session {
namespace {

// Room for the longest address: a Unix socket's 108-byte path and ":0".
constexpr size_t kAddressText = 128;

std::string localAddress(ClientSession& session) {
  sockaddr_storage addr{};
  int len = sizeof addr;
  if (uv_tcp_getsockname(session.handle(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return "?:0";
  }
  char text[kAddressText];
  const size_t n = net::formatSocketAddress(addr, text, sizeof text);
  return n == 0 ? "?:0" : std::string(text, n);
}

}  // namespace

std::string peerAddress(ClientSession& session) {
  char text[kAddressText];
  const size_t n = session.formatPeer(text, sizeof text);
  return n == 0 ? "?:0" : std::string(text, n);
}

namespace {

bool parseId(std::string_view text, uint64_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && *out > 0;
}

bool parseInt64(std::string_view text, int64_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
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

// ---- CLIENT LIST / KILL over every worker ----
//
// Workers share nothing, so a command that sees every client asks each worker on its own thread
// (Worker::post) and gathers the answers on the caller's worker, where its deferred reply
// completes (ClientSession::deferReply). The caller's own worker answers at once; with one
// worker the reply is immediate.

template <typename Part>
struct Gather {
  std::vector<Part> parts;  // in context.workers order
  size_t remaining = 0;     // touched on the caller's thread only
  std::function<void(net::Worker&, std::vector<Part>&)> done;
};

// part(w) on every worker w's thread, then done(caller, parts) on the caller's thread. A worker
// that has closed (shutting down) never answers: the request then goes with its client.
template <typename Part>
void askEveryWorker(net::Worker& caller, const std::function<Part(net::Worker&)>& part,
                    std::function<void(net::Worker&, std::vector<Part>&)> done) {
  const std::vector<net::Worker*>& workers = caller.context().workers;
  auto gather = std::make_shared<Gather<Part>>();
  gather->parts.resize(workers.size());
  gather->remaining = workers.size();
  gather->done = std::move(done);
  net::Worker* home = &caller;
  size_t own = workers.size();
  for (size_t i = 0; i < workers.size(); ++i) {
    if (workers[i] == home) {
      own = i;
      continue;
    }
    workers[i]->post([gather, i, part, home](net::Worker& self) {
      home->post([gather, i, answer = part(self)](net::Worker& back) mutable {
        gather->parts[i] = std::move(answer);
        if (--gather->remaining == 0) {
          gather->done(back, gather->parts);
        }
      });
    });
  }
  SP_ASSERT(own < workers.size());
  gather->parts[own] = part(caller);
  if (--gather->remaining == 0) {
    gather->done(caller, gather->parts);
  }
}

// Answers `session`'s command with finish(parts) (RESP2; *close_after when it closes the caller):
// at once into *reply with one worker, else through a deferred reply, re-encoded in `shape` for a
// RESP3 client.
template <typename Part>
void acrossWorkers(ClientSession& session, const resp::CommandInfo& cmd,
                   const std::function<Part(net::Worker&)>& part,
                   std::function<std::string(std::vector<Part>&, bool*)> finish,
                   resp::Resp3Shape shape, std::string* reply, bool* close_after) {
  net::Worker& worker = session.worker();
  if (worker.context().workers.size() <= 1) {
    std::vector<Part> parts{part(worker)};
    *reply = finish(parts, close_after);
    return;
  }
  PendingRequest* request = session.deferReply(&cmd);
  const resp::Protocol protocol = session.protocol();
  askEveryWorker<Part>(worker, part,
                       [request, finish = std::move(finish), protocol, shape](
                           net::Worker& home, std::vector<Part>& parts) {
                         bool close = false;
                         std::string text = finish(parts, &close);
                         if (protocol == resp::Protocol::kResp3 && !resp::isError(text)) {
                           text = resp::toResp3(text, shape);
                         }
                         request->close_after = close && request->owner != nullptr;
                         ClientSession::onBackendReply(home, request, 0, text);
                       });
}

// CLIENT KILL's filters (new form), or the old form's address. Copied: it travels to every worker.
struct KillFilter {
  bool old_form = false;
  uint64_t id = 0;
  std::string addr;
  std::string laddr;
  std::string type;
  std::string user;
  bool has_user = false;
  bool skipme = true;
  int64_t max_age = 0;  // seconds; 0 = any age (Redis 7.4's MAXAGE)
  uint64_t caller = 0;  // the caller's client id

  bool matches(ClientSession& s) const {
    const SessionState* state = s.state();
    if (old_form) {
      return peerAddress(s) == addr;
    }
    const uint64_t age_s = (monoMicros() - s.createdMicros()) / 1000000;
    return (id == 0 || s.id() == id) && (addr.empty() || peerAddress(s) == addr) &&
           (laddr.empty() || localAddress(s) == laddr) &&
           (type.empty() || typeMatches(type, state)) &&
           (!has_user || (state != nullptr ? state->rights().name : "default") == user) &&
           (!skipme || s.id() != caller) &&
           (max_age == 0 || age_s >= static_cast<uint64_t>(max_age));
  }
};

struct KillPart {
  uint64_t killed = 0;
  bool caller = false;  // the caller is among them: closed once its reply is written
};

// Closes the clients of `worker` that `filter` matches (the old form: the first only).
KillPart killOn(net::Worker& worker, const KillFilter& filter) {
  KillPart out;
  std::vector<ClientSession*> victims;
  for (ClientSession* s : clientsOf(worker).sessions()) {
    if (filter.matches(*s)) {
      victims.push_back(s);
    }
  }
  for (ClientSession* s : victims) {
    ++out.killed;
    if (s->id() == filter.caller) {
      out.caller = true;
    } else {
      s->close(net::CloseReason::kError, "killed by CLIENT KILL");
    }
  }
  return out;
}

// CLIENT KILL addr (old form) or CLIENT KILL filter value ... (new form), over every worker.
void clientKill(ClientSession& self, const resp::CommandInfo& cmd,
                std::span<const std::string_view> args, std::string* reply, bool* close_after) {
  KillFilter filter;
  filter.caller = self.id();
  if (args.size() == 3) {
    filter.old_form = true;
    filter.addr = std::string(args[2]);
  } else if ((args.size() - 2) % 2 != 0) {
    reply->append(resp::err::kSyntax);
    return;
  }
  for (size_t i = 2; !filter.old_form && i + 1 < args.size(); i += 2) {
    const std::string_view opt = args[i];
    const std::string_view value = args[i + 1];
    if (equalsIgnoreCase(opt, "id")) {
      if (!parseId(value, &filter.id)) {
        reply->append(resp::err::kClientIdPositive);
        return;
      }
    } else if (equalsIgnoreCase(opt, "addr")) {
      filter.addr = std::string(value);
    } else if (equalsIgnoreCase(opt, "laddr")) {
      filter.laddr = std::string(value);
    } else if (equalsIgnoreCase(opt, "type")) {
      if (!knownType(value)) {
        reply->append(resp::err::unknownClientType(value));
        return;
      }
      filter.type = std::string(value);
    } else if (equalsIgnoreCase(opt, "user")) {
      const auto& users = self.worker().config().auth.users;
      if (value != "default" && std::none_of(users.begin(), users.end(),
                                             [&](const auto& u) { return u.name == value; })) {
        reply->append(resp::err::noSuchUser(value));
        return;
      }
      filter.user = std::string(value);
      filter.has_user = true;
    } else if (equalsIgnoreCase(opt, "skipme")) {
      if (equalsIgnoreCase(value, "yes")) {
        filter.skipme = true;
      } else if (equalsIgnoreCase(value, "no")) {
        filter.skipme = false;
      } else {
        reply->append(resp::err::kSyntax);
        return;
      }
    } else if (equalsIgnoreCase(opt, "maxage")) {
      if (!parseInt64(value, &filter.max_age)) {
        reply->append(resp::err::kNotInteger);
        return;
      }
    } else {
      reply->append(resp::err::kSyntax);
      return;
    }
  }
  const bool old_form = filter.old_form;
  acrossWorkers<KillPart>(
      self, cmd, [filter](net::Worker& w) { return killOn(w, filter); },
      [old_form](std::vector<KillPart>& parts, bool* close) {
        uint64_t killed = 0;
        for (const KillPart& p : parts) {
          killed += p.killed;
          *close = *close || p.caller;
        }
        std::string out;
        if (!old_form) {
          resp::appendInteger(out, static_cast<int64_t>(killed));
        } else if (killed > 0) {
          resp::appendStatus(out, "OK");
        } else {
          out.append(resp::err::kNoSuchClient);
        }
        return out;
      },
      resp::Resp3Shape::kPlain, reply, close_after);
}

using ListPart = std::vector<std::pair<uint64_t, std::string>>;  // (id, CLIENT LIST line)

void clientList(ClientSession& self, const resp::CommandInfo& cmd,
                std::span<const std::string_view> args, std::string* reply) {
  std::string type;
  std::vector<uint64_t> ids;
  for (size_t i = 2; i < args.size(); ++i) {
    if (equalsIgnoreCase(args[i], "type") && i + 1 < args.size()) {
      type = std::string(args[++i]);
      if (!knownType(type)) {
        reply->append(resp::err::unknownClientType(type));
        return;
      }
    } else if (equalsIgnoreCase(args[i], "id") && i + 1 < args.size()) {
      while (++i < args.size()) {
        // Any integer, as redis-server reads it: one no client has (0, negative) matches none.
        int64_t id = 0;
        if (!parseInt64(args[i], &id)) {
          reply->append(resp::err::kInvalidClientId);
          return;
        }
        ids.push_back(static_cast<uint64_t>(std::max<int64_t>(id, 0)));
      }
    } else {
      reply->append(resp::err::kSyntax);
      return;
    }
  }
  bool unused = false;
  acrossWorkers<ListPart>(
      self, cmd,
      [type, ids](net::Worker& w) {
        ListPart lines;
        for (ClientSession* s : clientsOf(w).sessions()) {
          if ((!type.empty() && !typeMatches(type, s->state())) ||
              (!ids.empty() && std::find(ids.begin(), ids.end(), s->id()) == ids.end())) {
            continue;
          }
          lines.emplace_back(s->id(), ClientCommands::describe(*s));
        }
        return lines;
      },
      [](std::vector<ListPart>& parts, bool*) {
        ListPart all;
        for (ListPart& p : parts) {
          std::move(p.begin(), p.end(), std::back_inserter(all));
        }
        std::sort(all.begin(), all.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        std::string text;
        for (const auto& [id, line] : all) {
          text += line;
          text += '\n';
        }
        std::string out;
        resp::appendBulk(out, text);
        return out;
      },
      resp::Resp3Shape::kVerbatim, reply, &unused);
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
  if (session.isUnixSocket()) {
    flags += 'U';
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
  const uint64_t now_ms = session.worker().timers().nowMs();
  const uint64_t idle_s =
      now_ms > session.lastActiveMs() ? (now_ms - session.lastActiveMs()) / 1000 : 0;
  out += " age=" + std::to_string(age_s) + " idle=" + std::to_string(idle_s) + " flags=" + flags +
         " db=0";
  out += " sub=" + std::to_string(subs != nullptr ? subs->names(PubSubKind::kChannel).size() : 0);
  out += " psub=" + std::to_string(subs != nullptr ? subs->names(PubSubKind::kPattern).size() : 0);
  out += " ssub=" +
         std::to_string(subs != nullptr ? subs->names(PubSubKind::kShardChannel).size() : 0);
  out += " multi=" + (multi ? std::to_string(state->transaction().queued) : std::string("-1"));
  // The query buffer: a session holds one only for an incomplete request (rbs, its size; rbp,
  // the bytes in it). Replies wait in pooled buffers (omem); nothing is in Redis' reply list.
  const size_t qbuf = session.queryBufferBytes();
  const size_t qcap = session.queryBufferCapacity();
  const size_t omem = session.outputBytes();
  out += " qbuf=" + std::to_string(qbuf) + " qbuf-free=" + std::to_string(qcap - qbuf) +
         " argv-mem=0 multi-mem=0 rbs=" + std::to_string(qcap) + " rbp=" + std::to_string(qbuf);
  out += " obl=0 oll=0 omem=" + std::to_string(omem) +
         " tot-mem=" + std::to_string(session.memoryBytes());
  out += omem > 0 ? " events=rw" : " events=r";
  out += " cmd=";
  out += session.lastCommand() != nullptr ? session.lastCommand()->name : "NULL";
  out += " user=";
  out += state != nullptr ? state->rights().name : std::string("default");
  out += " redir=-1 resp=";
  out += session.protocol() == resp::Protocol::kResp3 ? '3' : '2';
  return out;
}

std::string ClientCommands::helloReply(uint64_t client_id, resp::Protocol protocol,
                                       std::string_view version) {
  std::string out;
  resp::appendArrayHeader(out, 14);
  resp::appendBulk(out, "server");
  resp::appendBulk(out, "redis");
  resp::appendBulk(out, "version");
  resp::appendBulk(out, version.empty() ? resp::CommandTable::redisVersion() : version);
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
  switch (cmd.handler) {
    case resp::Handler::kClientInfo:
      resp::appendBulk(*reply, describe(session) + "\n");
      return true;
    case resp::Handler::kClientList:
      clientList(session, cmd, args, reply);
      return true;
    case resp::Handler::kClientKill:
      clientKill(session, cmd, args, reply, close_after);
      return true;
    case resp::Handler::kClientNoEvict:
      if (equalsIgnoreCase(args[2], "on") || equalsIgnoreCase(args[2], "off")) {
        resp::appendStatus(*reply, "OK");
      } else {
        reply->append(resp::err::kSyntax);
      }
      return true;
    case resp::Handler::kConfigGet:
      ConfigCommands::get(session, cmd, args, reply);
      return true;
    case resp::Handler::kConfigHelp: {
      static constexpr std::string_view kLines[] = {
          "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
          "GET <pattern>",
          "    Return parameters matching the glob-like <pattern> and their values.",
          "SET <directive> <value>",
          "    Set the configuration <directive> to <value>.",
          "RESETSTAT",
          "    Reset statistics reported by the INFO command.",
          "REWRITE",
          "    Rewrite the configuration file.",
          "HELP",
          "    Prints this help.",
      };
      resp::appendStatusLines(*reply, kLines);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace sp::session
