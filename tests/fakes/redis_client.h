// A blocking hiredis client for unit tests that talk to a worker over loopback: one command at a
// time, or a pipeline whose replies come back in order. Replies are freed with the object.
#pragma once

#include <hiredis/hiredis.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sp::fakes {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

inline std::string text(const redisReply& r) { return std::string(r.str, r.len); }

// Every command of a pipeline got a reply.
inline bool allAnswered(const std::vector<Reply>& replies) {
  for (const Reply& r : replies) {
    if (r == nullptr) {
      return false;
    }
  }
  return true;
}

class RedisClient {
 public:
  explicit RedisClient(uint16_t port) {
    const timeval timeout{5, 0};
    ctx_ = redisConnectWithTimeout("127.0.0.1", port, timeout);
    if (ctx_ == nullptr || ctx_->err != 0) {
      throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
    }
    redisSetTimeout(ctx_, timeout);
  }
  ~RedisClient() { redisFree(ctx_); }
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Sends every command, then reads one reply per command (nullptr entries on a read error).
  std::vector<Reply> pipeline(const std::vector<std::vector<std::string>>& commands) {
    for (const auto& argv : commands) {
      std::vector<const char*> args;
      std::vector<size_t> lens;
      for (const std::string& a : argv) {
        args.push_back(a.data());
        lens.push_back(a.size());
      }
      redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), args.data(), lens.data());
    }
    std::vector<Reply> replies;
    for (size_t i = 0; i < commands.size(); ++i) {
      void* raw = nullptr;
      if (redisGetReply(ctx_, &raw) != REDIS_OK) {
        replies.emplace_back(nullptr);
        continue;
      }
      replies.emplace_back(static_cast<redisReply*>(raw));
    }
    return replies;
  }
  Reply command(const std::vector<std::string>& argv) { return std::move(pipeline({argv})[0]); }
  // After a nullptr reply: true when the proxy closed the connection (not a read timeout).
  bool closedByPeer() const { return ctx_->err == REDIS_ERR_EOF; }

 private:
  redisContext* ctx_ = nullptr;
};

// One command's reply as text: a string's, a status's or an error's words, "(array)" for an
// array, "(no reply)" when none came.
inline std::string replyText(RedisClient& client, const std::vector<std::string>& argv) {
  Reply r = client.command(argv);
  if (r == nullptr) {
    return "(no reply)";
  }
  return r->type == REDIS_REPLY_ARRAY ? "(array)" : text(*r);
}

}  // namespace sp::fakes
