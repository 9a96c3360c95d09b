// Stateful fuzz target for the client session: the input is a program of requests (plain and
// multi-key commands, transactions with WATCH, subscriptions, blocking commands, scripts, bad
// arity, unknown commands, QUIT, protocol garbage, disconnects mid-pipeline) played by two
// clients, pipelined or one at a time, against a real Worker whose shards are FakeShards.
//
// Invariants, any breach aborts:
//   - every request gets exactly one reply (an UNSUBSCRIBE one per channel), in order: after the
//     program each live client's final PING must be the next reply;
//   - a reply is either an error or exactly the value the request asked for: the fakes answer
//     each keyed request with its shard and its own arguments, so another request's value, a
//     misordered reply or one from the wrong shard cannot pass;
//   - no shard is sent a key it does not own (checked by the fakes, transactions included);
//   - the proxy stays up: every input ends with a fresh connection's PING answered.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "control/proxy_control.h"
#include "core/log.h"
#include "fakes/fake_shards.h"
#include "fakes/reply_tree.h"
#include "net/listener.h"
#include "net/proxy_context.h"
#include "net/worker.h"
#include "session/worker_clients.h"

namespace {

using sp::fakes::Reply;

constexpr size_t kShards = 4;
constexpr int kReplyTimeoutMs = 10000;
constexpr size_t kMaxOps = 64;

// Keys spread over the four shards, two pairs sharing a hash tag.
const std::vector<std::string> kKeys = {"a", "b", "c", "d", "{t}1", "{t}2", "{u}1", "{u}2"};
const std::vector<std::string> kChannels = {"ch0", "ch1", "ch2"};
const std::vector<std::string> kPatterns = {"p*", "q?"};

std::string g_program;  // the running input, printed with a failure

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "session fuzz: %s\nprogram:\n%s\n", what.c_str(), g_program.c_str());
  std::abort();
}

struct Harness {
  Harness() : shards(kShards, [](const std::string& what) { fail(what); }) {
    sp::setLogLevel("off");
    ::signal(SIGPIPE, SIG_IGN);  // as shardproxy's main: a client that hung up is not fatal
    auto config = std::make_shared<sp::config::Config>();
    for (size_t i = 0; i < kShards; ++i) {
      sp::config::ShardConfig shard;
      shard.name = "s" + std::to_string(i);
      shard.host = "127.0.0.1";
      shard.port = shards.port(i);
      config->shards.push_back(shard);
    }
    context.publish(config, shards.topology());
    context.control = &control;  // the real one: INFO's text is fuzzed too
    int fd = -1;
    if (sp::Status bound = sp::net::bindListenSocket("127.0.0.1", 0, &port, &fd); !bound.ok()) {
      fail("cannot listen: " + bound.message());
    }
    context.bound_port = port;
    worker = std::make_unique<sp::net::Worker>(0, context, std::vector<sp::net::ListenSocket>{{fd}},
                                               sp::session::buildWorkerParts);
    context.workers.push_back(worker.get());
    worker->startThread();
    worker->startAccepting();
  }
  ~Harness() {
    worker->requestStop();
    worker->join();
  }

  sp::fakes::FakeShards shards;
  sp::net::ProxyContext context;
  sp::control::ProxyControl control{context};
  std::unique_ptr<sp::net::Worker> worker;
  uint16_t port = 0;
};

Harness* g_harness = nullptr;

void stopHarness() {
  delete g_harness;
  g_harness = nullptr;
}

Harness& harness() {
  if (g_harness == nullptr) {
    g_harness = new Harness();
    std::atexit(stopHarness);
  }
  return *g_harness;
}

enum class Kind {
  kPlain,     // expected value, or an error; queued inside MULTI
  kMustFail,  // an error, always
  kMulti,
  kExec,
  kDiscard,
  kWatch,
  kUnwatch,
  kSubscribe,
  kUnsubscribe,
  kPing,
  kReset,
  kQuit,     // +OK, then the proxy closes
  kGarbage,  // a protocol error, then the proxy closes
};

struct Request {
  Kind kind = Kind::kPlain;
  std::string text;  // for the failure report
  Reply expected;    // kPlain: the value; kSubscribe/kUnsubscribe: name (type '$') or none
  bool pattern = false;
};

Reply bulk(std::string s) { return Reply::bulk(std::move(s)); }

std::string encode(const std::vector<std::string>& argv) {
  std::string out = "*" + std::to_string(argv.size()) + "\r\n";
  for (const std::string& a : argv) {
    out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  }
  return out;
}

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    out += (out.empty() ? "" : " ") + a;
  }
  return out;
}

class Client {
 public:
  explicit Client(int id) : id_(id) {}
  ~Client() { closeSocket(); }

  bool connected() const { return fd_ >= 0; }
  bool finished() const { return finished_; }

  void connect(uint16_t port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // The worker listens once its thread runs: the first connection may have to wait for it.
    for (int attempt = 0; fd_ < 0; ++attempt) {
      fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
        break;
      }
      closeSocket();
      if (attempt == 500) {
        fail("cannot connect to the proxy");
      }
      ::usleep(10000);
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    multi_ = false;
    queued_.clear();
    channels_.clear();
    patterns_.clear();
    finished_ = false;
    in_.clear();
  }

  void add(Request request, const std::string& bytes) {
    if (request.kind == Kind::kQuit || request.kind == Kind::kGarbage) {
      finished_ = true;
    }
    g_program += "  c" + std::to_string(id_) + ": " + request.text + "\n";
    pending_ += bytes;
    awaiting_.push_back(std::move(request));
  }

  void write() {
    size_t off = 0;
    while (off < pending_.size()) {
      ssize_t n = ::send(fd_, pending_.data() + off, pending_.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        fail("c" + std::to_string(id_) + ": the proxy stopped taking requests");
      }
      off += static_cast<size_t>(n);
    }
    pending_.clear();
  }

  // Writes half of what is pending and hangs up without reading.
  void cut() {
    g_program += "  c" + std::to_string(id_) + ": <hang up after half the pipeline>\n";
    pending_.resize(pending_.size() / 2);
    write();
    awaiting_.clear();
    closeSocket();
  }

  // Reads and checks the reply of every request written.
  void check() {
    while (!awaiting_.empty()) {
      Request request = std::move(awaiting_.front());
      awaiting_.pop_front();
      checkOne(request);
    }
    if (finished_) {
      expectClosed();
      closeSocket();
    }
  }

  // The final PING: the next reply, so nothing extra was delivered.
  void finish() {
    Request ping;
    ping.kind = Kind::kPing;
    ping.text = "PING (final)";
    add(std::move(ping), encode({"PING"}));
    write();
    check();
    closeSocket();
  }

 private:
  void closeSocket() {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }

  // recv within kReplyTimeoutMs (-1 with errno ETIMEDOUT past it). Signals (libFuzzer's timer)
  // interrupt the wait; they do not end it.
  ssize_t receive(char* buf, size_t len) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kReplyTimeoutMs);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        errno = ETIMEDOUT;
        return -1;
      }
      pollfd p{fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno != EINTR) {
        return -1;
      }
      if (ready <= 0) {
        continue;
      }
      const ssize_t n = ::recv(fd_, buf, len, 0);
      if (n >= 0 || errno != EINTR) {
        return n;
      }
    }
  }

  bool subscribed() const { return !channels_.empty() || !patterns_.empty(); }

  Reply next(const Request& request) {
    for (;;) {
      Reply reply;
      size_t used = 0;
      const int r = sp::fakes::parseReply(in_, &used, &reply);
      if (r < 0) {
        fail("c" + std::to_string(id_) + ": malformed reply to " + request.text + ": " +
             in_.substr(0, 80));
      }
      if (r > 0) {
        in_.erase(0, used);
        return reply;
      }
      char buf[16 * 1024];
      ssize_t n = receive(buf, sizeof(buf));
      if (n <= 0) {
        fail("c" + std::to_string(id_) + ": no reply to " + request.text +
             (n == 0 ? " (connection closed)" : " (timed out)"));
      }
      in_.append(buf, static_cast<size_t>(n));
    }
  }

  void expectClosed() {
    if (!in_.empty()) {
      fail("c" + std::to_string(id_) + ": bytes after the last reply: " + in_.substr(0, 80));
    }
    char buf[256];
    ssize_t n = receive(buf, sizeof(buf));
    if (n > 0) {
      fail("c" + std::to_string(id_) +
           ": bytes after the last reply: " + std::string(buf, static_cast<size_t>(n)));
    }
    if (n < 0 && errno == ETIMEDOUT) {
      fail("c" + std::to_string(id_) + ": the proxy did not close the connection");
    }
  }

  void mismatch(const Request& request, const Reply& got, const std::string& wanted) {
    fail("c" + std::to_string(id_) + ": " + request.text + " was answered " + got.describe() +
         ", wanted " + wanted);
  }

  void checkOne(const Request& request) {
    const Reply got = next(request);
    switch (request.kind) {
      case Kind::kPlain:
        if (got.isError()) {
          return;
        }
        if (subscribed()) {
          mismatch(request, got, "an error (subscribed)");
        }
        if (multi_) {
          if (!got.isStatus("QUEUED")) {
            mismatch(request, got, "+QUEUED or an error");
          }
          queued_.push_back(request.expected);
          return;
        }
        if (!got.matches(request.expected)) {
          mismatch(request, got, request.expected.describe());
        }
        return;
      case Kind::kMustFail:
        if (!got.isError()) {
          mismatch(request, got, "an error");
        }
        return;
      case Kind::kMulti:
        if (got.isStatus("OK") && !multi_ && !subscribed()) {
          multi_ = true;
          queued_.clear();
        } else if (!got.isError()) {
          mismatch(request, got, multi_ || subscribed() ? "an error" : "+OK or an error");
        }
        return;
      case Kind::kExec: {
        const bool was_multi = multi_;
        multi_ = false;
        std::vector<Reply> queued = std::move(queued_);
        queued_.clear();
        if (got.isError() || (was_multi && got.isNullArray())) {
          return;
        }
        if (!was_multi || subscribed()) {
          mismatch(request, got, "an error");
        }
        Reply wanted = Reply::array(std::move(queued));
        if (!got.matches(wanted)) {
          mismatch(request, got, wanted.describe());
        }
        return;
      }
      case Kind::kDiscard:
        if (multi_ && got.isStatus("OK")) {
          multi_ = false;
          queued_.clear();
        } else if (!got.isError() || multi_) {
          mismatch(request, got, multi_ ? "+OK" : "an error");
        }
        return;
      case Kind::kWatch:
        if (got.isError() || (got.isStatus("OK") && !multi_ && !subscribed())) {
          return;
        }
        mismatch(request, got, multi_ ? "an error" : "+OK or an error");
        return;
      case Kind::kUnwatch:
        if (got.isError()) {
          return;
        }
        if (multi_ && got.isStatus("QUEUED")) {
          queued_.push_back(Reply::status("OK"));
        } else if (multi_ || subscribed() || !got.isStatus("OK")) {
          mismatch(request, got, "+OK, +QUEUED in MULTI, or an error");
        }
        return;
      case Kind::kSubscribe:
        checkSubscribe(request, got);
        return;
      case Kind::kUnsubscribe:
        checkUnsubscribe(request, got);
        return;
      case Kind::kPing: {
        if (multi_ && got.isStatus("QUEUED")) {
          queued_.push_back(Reply::status("PONG"));
          return;
        }
        const Reply wanted =
            subscribed() ? Reply::array({bulk("pong"), bulk("")}) : Reply::status("PONG");
        if (!got.matches(wanted)) {
          mismatch(request, got, wanted.describe());
        }
        return;
      }
      case Kind::kReset:
        if (!got.isStatus("RESET")) {
          mismatch(request, got, "+RESET");
        }
        multi_ = false;
        queued_.clear();
        channels_.clear();
        patterns_.clear();
        return;
      case Kind::kQuit:
        if (!got.isStatus("OK")) {
          mismatch(request, got, "+OK");
        }
        return;
      case Kind::kGarbage:
        if (!got.isError()) {
          mismatch(request, got, "a protocol error");
        }
        return;
    }
  }

  Reply confirmation(const char* verb, const Reply& name) const {
    return Reply::array(
        {bulk(verb), name,
         Reply::integer(static_cast<int64_t>(channels_.size() + patterns_.size()))});
  }

  void checkSubscribe(const Request& request, const Reply& got) {
    if (multi_) {
      if (!got.isError()) {
        mismatch(request, got, "an error (SUBSCRIBE inside MULTI is refused)");
      }
      return;
    }
    if (got.isError()) {
      mismatch(request, got, "a confirmation");
    }
    (request.pattern ? patterns_ : channels_).insert(request.expected.str);
    const Reply wanted =
        confirmation(request.pattern ? "psubscribe" : "subscribe", request.expected);
    if (!got.matches(wanted)) {
      mismatch(request, got, wanted.describe());
    }
  }

  // One confirmation per channel dropped (one with a nil name when there was none).
  void checkUnsubscribe(const Request& request, const Reply& first) {
    if (multi_) {
      if (!first.isError()) {
        mismatch(request, first, "an error (inside MULTI)");
      }
      return;
    }
    const char* verb = request.pattern ? "punsubscribe" : "unsubscribe";
    std::set<std::string>& set = request.pattern ? patterns_ : channels_;
    std::vector<Reply> names;
    if (request.expected.type == '$') {
      names.push_back(request.expected);
    } else {
      for (const std::string& name : set) {
        names.push_back(bulk(name));
      }
    }
    if (names.empty()) {
      const Reply wanted = confirmation(verb, Reply::nullBulk());
      if (!first.matches(wanted)) {
        mismatch(request, first, wanted.describe());
      }
      return;
    }
    std::set<std::string> left(set);
    for (size_t i = 0; i < names.size(); ++i) {
      const Reply got = i == 0 ? first : next(request);
      // Which name comes first is the server's choice; the count must follow it.
      if (got.type != '*' || got.elems.size() != 3 || got.elems[1].type != '$') {
        mismatch(request, got, std::string("a ") + verb + " confirmation");
      }
      set.erase(got.elems[1].str);
      const bool known = request.expected.type == '$' ? got.elems[1].str == request.expected.str
                                                      : left.contains(got.elems[1].str);
      left.erase(got.elems[1].str);
      if (!known || !got.matches(confirmation(verb, got.elems[1]))) {
        mismatch(request, got, std::string(verb) + " of a channel asked for, with the count left");
      }
    }
  }

  int id_;
  int fd_ = -1;
  bool finished_ = false;
  std::string pending_;
  std::string in_;
  std::deque<Request> awaiting_;
  bool multi_ = false;
  std::vector<Reply> queued_;
  std::set<std::string> channels_;
  std::set<std::string> patterns_;
};

// Reads the program: each op is one byte (bit 7: which client) and up to four argument bytes.
class Program {
 public:
  Program(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

const std::string& key(Program& p) { return kKeys[p.byte() % kKeys.size()]; }

std::string echo(const std::vector<std::string>& argv, const std::string& owner_key) {
  const auto& topology = *harness().shards.topology();
  return "s" + std::to_string(topology.shardOfKey(owner_key)) + "|" + join(argv);
}

// Appends one generated request to `client`; false for the ops that are not requests.
void addRequest(Client& client, uint8_t op, Program& p) {
  const auto& topology = *harness().shards.topology();
  Request r;
  std::vector<std::string> argv;
  switch (op) {
    case 0:
      argv = {"GET", key(p)};
      r.expected = bulk(echo(argv, argv[1]));
      break;
    case 1:
      argv = {"SET", key(p), "v" + std::to_string(p.byte())};
      r.expected = bulk(echo(argv, argv[1]));
      break;
    case 2:
      argv = {"INCR", key(p)};
      r.expected = bulk(echo(argv, argv[1]));
      break;
    case 3:
    case 4: {
      argv = {op == 3 ? "MGET" : "DEL"};
      const size_t n = 1 + p.byte() % 4;
      std::vector<Reply> values;
      for (size_t i = 0; i < n; ++i) {
        argv.push_back(key(p));
        values.push_back(
            bulk("s" + std::to_string(topology.shardOfKey(argv.back())) + "|" + argv.back()));
      }
      r.expected =
          op == 3 ? Reply::array(std::move(values)) : Reply::integer(static_cast<int64_t>(n));
      break;
    }
    case 5: {
      argv = {"MSET"};
      const size_t n = 1 + p.byte() % 3;
      for (size_t i = 0; i < n; ++i) {
        argv.push_back(key(p));
        argv.push_back("m" + std::to_string(i));
      }
      r.expected = Reply::status("OK");
      break;
    }
    case 6:
      argv = {"MULTI"};
      r.kind = Kind::kMulti;
      break;
    case 7:
      argv = {"EXEC"};
      r.kind = Kind::kExec;
      break;
    case 8:
      argv = {"DISCARD"};
      r.kind = Kind::kDiscard;
      break;
    case 9:
      argv = {"WATCH", key(p)};
      if (p.byte() % 2 == 1) {
        argv.push_back(key(p));
      }
      r.kind = Kind::kWatch;
      break;
    case 10:
      argv = {"UNWATCH"};
      r.kind = Kind::kUnwatch;
      break;
    case 11:
    case 12: {
      r.pattern = op == 12;
      const auto& names = r.pattern ? kPatterns : kChannels;
      argv = {r.pattern ? "PSUBSCRIBE" : "SUBSCRIBE", names[p.byte() % names.size()]};
      r.kind = Kind::kSubscribe;
      r.expected = bulk(argv[1]);
      break;
    }
    case 13:
    case 14: {
      r.pattern = op == 14;
      const auto& names = r.pattern ? kPatterns : kChannels;
      argv = {r.pattern ? "PUNSUBSCRIBE" : "UNSUBSCRIBE"};
      const uint8_t which = p.byte();
      if (which % 2 == 1) {
        argv.push_back(names[which / 2 % names.size()]);
        r.expected = bulk(argv[1]);
      }
      r.kind = Kind::kUnsubscribe;
      break;
    }
    case 15:
      argv = {"PING"};
      r.kind = Kind::kPing;
      break;
    case 16:
      argv = {"ECHO", "e" + std::to_string(p.byte())};
      r.expected = bulk(argv[1]);
      break;
    case 17:
      argv = {"RESET"};
      r.kind = Kind::kReset;
      break;
    case 18: {
      argv = {"BLPOP", key(p)};
      if (p.byte() % 2 == 1) {
        argv.push_back(key(p));
      }
      argv.push_back("0.01");
      r.expected = Reply::array({bulk(argv[1]), bulk(echo(argv, argv[1]))});
      break;
    }
    case 19:
      argv = {"EVAL", "return 1", "1", key(p)};
      r.expected = bulk(echo(argv, argv[3]));
      break;
    case 20:
      argv = {"EVAL", "return redis.call('get','x')", "0"};
      r.kind = Kind::kMustFail;
      break;
    case 21:
      argv = {p.byte() % 2 == 0 ? "GET" : "NOSUCHCOMMAND"};
      r.kind = Kind::kMustFail;
      break;
    case 22:
      argv = {"SUNION", key(p), key(p)};
      r.expected = bulk(echo(argv, argv[1]));
      break;
    case 23:
      argv = {"DBSIZE"};
      r.expected = Reply::integer(static_cast<int64_t>(kShards));
      break;
    case 24:
      argv = {"QUIT"};
      r.kind = Kind::kQuit;
      break;
    default: {
      r.kind = Kind::kGarbage;
      r.text = "<a bulk length of -7>";
      client.add(std::move(r), "*1\r\n$-7\r\n");
      return;
    }
  }
  r.text = join(argv);
  client.add(std::move(r), encode(argv));
}

constexpr uint8_t kRequestOps = 26;  // 0..25 above
constexpr uint8_t kCut = 27;         // hang up mid-pipeline
constexpr uint8_t kOps = 30;         // 26, 28, 29: write both pipelines, read and check

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Harness& h = harness();
  g_program.clear();
  Program program(data, size);
  Client clients[2] = {Client(0), Client(1)};
  auto flush = [&clients] {
    g_program += "  <write both pipelines, read the replies>\n";
    for (Client& c : clients) {
      if (c.connected()) {
        c.write();
      }
    }
    for (Client& c : clients) {
      if (c.connected()) {
        c.check();
      }
    }
  };
  for (size_t ops = 0; !program.done() && ops < kMaxOps; ++ops) {
    const uint8_t b = program.byte();
    Client& client = clients[b >> 7];
    const uint8_t op = static_cast<uint8_t>((b & 0x7f) % kOps);
    if (op < kRequestOps) {
      if (client.connected() && client.finished()) {
        flush();  // after QUIT or garbage: the next request goes on a new connection
      }
      if (!client.connected()) {
        client.connect(h.port);
      }
      addRequest(client, op, program);
    } else if (op == kCut) {
      if (client.connected()) {
        client.cut();
      }
    } else {
      flush();
    }
  }
  flush();
  for (Client& c : clients) {
    if (c.connected()) {
      c.finish();
    }
  }
  Client probe(2);  // the proxy is still serving
  probe.connect(h.port);
  probe.finish();
  return 0;
}
