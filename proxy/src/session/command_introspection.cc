// COMMAND and its subcommands, answered from the command table with redis-server 7.0's bytes.
#include "session/command_introspection.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <vector>

#include "core/ascii.h"
#include "resp/encoder.h"
#include "resp/errors.h"

namespace sp::session {
namespace {

using Args = std::span<const std::string_view>;

// ---- COMMAND, COUNT, LIST, INFO, DOCS, HELP: redis-server 7.0's replies from the table ----
//
// Whole lists (COMMAND, COUNT, LIST, INFO and DOCS without names) hold redis-server's commands
// only: the proxy's own PROXY is left out, as clients that parse them expect. Named, PROXY is
// described like any other command. Redis lists commands (and a container's subcommands) in its
// dict's order, random per process; the table's is by name.

// COMMAND INFO / DOCS names, as redis-server's lookupCommandBySds: "container|sub" names a
// subcommand (one level only), any case.
const resp::CommandInfo* findByFullName(std::string_view name) {
  const size_t bar = name.find('|');
  const resp::CommandInfo* top = resp::CommandTable::instance().find(name.substr(0, bar));
  if (top == nullptr || bar == std::string_view::npos) {
    return top;
  }
  for (const resp::CommandInfo& sub : top->subcommands) {
    if (equalsIgnoreCase(sub.name.substr(top->name.size() + 1), name.substr(bar + 1))) {
      return &sub;
    }
  }
  return nullptr;
}

int64_t redisCommandCount() {
  int64_t n = 0;
  for (const resp::CommandInfo& c : resp::CommandTable::instance().commands()) {
    n += c.has(resp::kCmdProxy) ? 0 : 1;
  }
  return n;
}

void commandInfo(Args names, std::string* reply) {
  if (names.empty()) {
    resp::appendArrayHeader(*reply, redisCommandCount());
    for (const resp::CommandInfo& c : resp::CommandTable::instance().commands()) {
      if (!c.has(resp::kCmdProxy)) {
        reply->append(c.info_resp);
      }
    }
    return;
  }
  resp::appendArrayHeader(*reply, static_cast<int64_t>(names.size()));
  for (std::string_view name : names) {
    if (const resp::CommandInfo* c = findByFullName(name)) {
      reply->append(c->info_resp);
    } else {
      resp::appendNullBulk(*reply);
    }
  }
}

void commandDocs(Args names, std::string* reply) {
  std::string body;
  int64_t found = 0;
  if (names.empty()) {
    for (const resp::CommandInfo& c : resp::CommandTable::instance().commands()) {
      if (!c.has(resp::kCmdProxy)) {
        body.append(c.docs_resp);
        ++found;
      }
    }
  }
  for (std::string_view name : names) {
    if (const resp::CommandInfo* c = findByFullName(name)) {
      body.append(c->docs_resp);
      ++found;
    }
  }
  resp::appendArrayHeader(*reply, found * 2);
  reply->append(body);
}

// redis-server's stringmatchlen (util.c) with nocase, byte for byte: the glob of COMMAND LIST
// FILTERBY PATTERN. Past the end of the pattern reads as the NUL its sds string ends with. Each
// level of recursion (a '*') matches at least one more byte of the text, a command name: the
// depth stays under 64 whatever the pattern.
bool stringMatch(std::string_view pattern, std::string_view text, bool* skip_longer) {
  size_t p = 0;
  size_t t = 0;
  const auto at = [&](size_t i) { return i < pattern.size() ? pattern[i] : '\0'; };
  const auto fold = [](char c) { return static_cast<int>(lowerAscii(c)); };
  while (p < pattern.size() && t < text.size()) {
    switch (pattern[p]) {
      case '*':
        while (p + 1 < pattern.size() && pattern[p + 1] == '*') {
          ++p;
        }
        if (p + 1 == pattern.size()) {
          return true;
        }
        for (; t < text.size(); ++t) {
          if (stringMatch(pattern.substr(p + 1), text.substr(t), skip_longer)) {
            return true;
          }
          if (*skip_longer) {
            return false;
          }
        }
        *skip_longer = true;
        return false;
      case '?':
        ++t;
        break;
      case '[': {
        ++p;
        const bool negate = at(p) == '^';
        p += negate ? 1 : 0;
        bool match = false;
        while (true) {
          if (at(p) == '\\' && pattern.size() - p >= 2) {
            ++p;
            match = match || pattern[p] == text[t];
          } else if (at(p) == ']') {
            break;
          } else if (p >= pattern.size()) {
            --p;
            break;
          } else if (pattern.size() - p >= 3 && pattern[p + 1] == '-') {
            char lo = pattern[p];  // compared as (signed) ints, then folded, as Redis does
            char hi = pattern[p + 2];
            if (lo > hi) {
              std::swap(lo, hi);
            }
            p += 2;
            match = match || (fold(text[t]) >= fold(lo) && fold(text[t]) <= fold(hi));
          } else {
            match = match || fold(pattern[p]) == fold(text[t]);
          }
          ++p;
        }
        if (match == negate) {
          return false;
        }
        ++t;
        break;
      }
      case '\\':
        p += pattern.size() - p >= 2 ? 1 : 0;
        [[fallthrough]];
      default:
        if (fold(pattern[p]) != fold(text[t])) {
          return false;
        }
        ++t;
        break;
    }
    ++p;
    if (t == text.size()) {
      while (at(p) == '*') {
        ++p;
      }
      break;
    }
  }
  return p >= pattern.size() && t == text.size();
}

// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]: every command, each
// followed by its subcommands ("config|get"), that passes the filter.
void commandList(Args args, std::string* reply) {
  enum class Filter : uint8_t { kNone, kModule, kAclCat, kPattern } filter = Filter::kNone;
  if (args.size() == 5 && equalsIgnoreCase(args[2], "filterby")) {
    filter = equalsIgnoreCase(args[3], "module")    ? Filter::kModule
             : equalsIgnoreCase(args[3], "aclcat")  ? Filter::kAclCat
             : equalsIgnoreCase(args[3], "pattern") ? Filter::kPattern
                                                    : Filter::kNone;
  }
  if (args.size() != 2 && filter == Filter::kNone) {
    reply->append(resp::err::kSyntax);
    return;
  }
  const auto keep = [&](const resp::CommandInfo& c) {
    switch (filter) {
      case Filter::kNone:
        return true;
      case Filter::kModule:
        return false;  // no modules
      case Filter::kAclCat: {
        std::string_view cats = c.acl_categories;
        while (!cats.empty()) {
          const size_t end = std::min(cats.find(' '), cats.size());
          if (equalsIgnoreCase(cats.substr(0, end), args[4])) {
            return true;
          }
          cats.remove_prefix(std::min(end + 1, cats.size()));
        }
        return false;
      }
      case Filter::kPattern: {
        bool skip_longer = false;
        return stringMatch(args[4], c.name, &skip_longer);
      }
    }
    return false;
  };
  std::string body;
  int64_t n = 0;
  const auto add = [&](const resp::CommandInfo& c) {
    if (keep(c)) {
      resp::appendBulk(body, c.name);
      ++n;
    }
  };
  for (const resp::CommandInfo& c : resp::CommandTable::instance().commands()) {
    if (!c.has(resp::kCmdProxy)) {
      add(c);
      std::for_each(c.subcommands.begin(), c.subcommands.end(), add);
    }
  }
  resp::appendArrayHeader(*reply, n);
  reply->append(body);
}

constexpr std::string_view kCommandHelp[] = {
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
    "HELP",
    "    Prints this help.",
};

// ---- COMMAND GETKEYS / GETKEYSANDFLAGS: redis-server 7.0's getKeysSubcommandImpl (server.c)
// and getKeysFromCommandWithSpecs (db.c) over Redis' own key specs, falling back to the command's
// getkeys function where a spec cannot be applied or its flags vary with the arguments. The keys
// come in Redis' order, repeats kept (routing's extractKeys sorts and merges them). ----

struct KeyRef {
  int pos;
  uint16_t flags;  // resp::KeySpecFlag bits
};

// An argument as the C string Redis compares (strcasecmp, atoi): up to its first NUL byte.
bool argIs(std::string_view arg, std::string_view word) {
  return equalsIgnoreCase(arg.substr(0, arg.find('\0')), word);
}

// Redis' string2ll (util.c): a decimal without leading zeros, spaces or '+', within long long.
bool string2ll(std::string_view s, int64_t* value) {
  if (s.empty() || s.size() >= 21) {
    return false;
  }
  if (s == "0") {
    *value = 0;
    return true;
  }
  const bool negative = s[0] == '-';
  s.remove_prefix(negative ? 1 : 0);
  if (s.empty() || s[0] < '1' || s[0] > '9') {
    return false;
  }
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9' || v > (UINT64_MAX - static_cast<uint64_t>(c - '0')) / 10) {
      return false;
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > (negative ? uint64_t{1} << 63 : static_cast<uint64_t>(INT64_MAX))) {
    return false;
  }
  *value = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

// C's atoi as glibc has it: (int) strtol, spaces and a sign allowed, stopping at a non-digit.
int atoiC(std::string_view arg) {
  const std::string text(arg.substr(0, arg.find('\0')));
  return static_cast<int>(std::strtol(text.c_str(), nullptr, 10));
}

// getKeysUsingKeySpecs: false where a spec cannot be applied (unknown, incomplete, a numkeys or
// range that does not fit the arguments).
bool keysFromSpecs(const resp::CommandInfo& cmd, Args args, std::vector<KeyRef>* keys) {
  using resp::KeySpec;
  const int argc = static_cast<int>(args.size());
  for (const KeySpec& spec : cmd.redis_key_specs) {
    if ((spec.flags & resp::kKeyNotKey) != 0) {
      continue;
    }
    int first = 0;
    if (spec.begin == KeySpec::Begin::kIndex) {
      first = spec.begin_index;
    } else if (spec.begin == KeySpec::Begin::kKeyword) {
      const int from = spec.begin_keyword_startfrom;
      const int start = from > 0 ? from : argc + from;
      const int end = from > 0 ? argc - 1 : 1;
      for (int i = start; i != end && i < argc && i >= 1; i += start <= end ? 1 : -1) {
        if (argIs(args[static_cast<size_t>(i)], spec.begin_keyword)) {
          first = i + 1;
          break;
        }
      }
      if (first == 0) {
        continue;  // keyword absent: this spec names no key
      }
    } else {
      return false;
    }
    int last = 0;
    int step = 1;
    if (spec.find == KeySpec::Find::kRange) {
      step = spec.range_keystep;
      if (spec.range_lastkey >= 0) {
        last = first + spec.range_lastkey;
      } else if (spec.range_limit == 0) {
        last = argc + spec.range_lastkey;
      } else {
        last = first + ((argc - first) / spec.range_limit + spec.range_lastkey);
      }
    } else if (spec.find == KeySpec::Find::kKeyNum) {
      step = spec.keynum_keystep;
      const int at = first + spec.keynum_index;
      int64_t numkeys = 0;
      if (spec.keynum_index >= argc || at >= argc ||
          !string2ll(args[static_cast<size_t>(at)], &numkeys) || numkeys < 0) {
        return false;
      }
      first += spec.keynum_firstkey;
      // Redis computes first + (int)numkeys - 1 in int: the count's low 32 bits, wrapping.
      last = static_cast<int>(first + static_cast<int64_t>(static_cast<int>(numkeys)) - 1);
    } else {
      return false;
    }
    if (last >= argc || last < first || first >= argc || step < 1) {
      return false;
    }
    for (int i = first; i <= last; i += step) {
      keys->push_back({i, spec.flags});
    }
    if ((spec.flags & resp::kKeyIncomplete) != 0) {
      return false;
    }
  }
  return true;
}

// genericGetKeys (db.c): numkeys (atoi) at count_at, keys from count_at + 1, then the destination.
void numKeysKeys(int store_at, int count_at, Args args, std::vector<KeyRef>* keys) {
  const int num = atoiC(args[static_cast<size_t>(count_at)]);
  if (num < 1 || num > static_cast<int>(args.size()) - (count_at + 1)) {
    return;
  }
  for (int i = 0; i < num; ++i) {
    keys->push_back({count_at + 1 + i, 0});
  }
  if (store_at != 0) {
    keys->push_back({store_at, 0});
  }
}

// The command's getkeys function (db.c: sortGetKeys, migrateGetKeys, ...), with its flags.
void keysFromProc(resp::KeysProc proc, Args args, std::vector<KeyRef>* keys) {
  using resp::KeysProc;
  const int argc = static_cast<int>(args.size());
  const auto arg = [&](int i) { return args[static_cast<size_t>(i)]; };
  switch (proc) {
    case KeysProc::kNone:
      return;
    case KeysProc::kNumKeysAt1:
      return numKeysKeys(0, 1, args, keys);
    case KeysProc::kNumKeysAt2:
      return numKeysKeys(0, 2, args, keys);
    case KeysProc::kStoreThenNumKeys:
      return numKeysKeys(1, 2, args, keys);
    case KeysProc::kSortRo:
      keys->push_back({1, resp::kKeyRO | resp::kKeyAccess});
      return;
    case KeysProc::kSort: {
      keys->push_back({1, resp::kKeyRO | resp::kKeyAccess});
      int store = 0;  // the last STORE wins; LIMIT takes two arguments, GET and BY one
      for (int i = 2; i < argc; ++i) {
        if (argIs(arg(i), "limit")) {
          i += 2;
        } else if (argIs(arg(i), "store") && i + 1 < argc) {
          store = i + 1;
        } else if (argIs(arg(i), "get") || argIs(arg(i), "by")) {
          i += 1;
        }
      }
      if (store != 0) {
        keys->push_back({store, resp::kKeyOW | resp::kKeyUpdate});
      }
      return;
    }
    case KeysProc::kMigrate: {
      int first = 3;
      int num = 1;
      for (int i = 6; i < argc; ++i) {
        if (argIs(arg(i), "keys")) {
          // KEYS with a key argument is a syntax error MIGRATE reports: no keys then.
          num = arg(3).substr(0, arg(3).find('\0')).empty() ? argc - (i + 1) : 0;
          first = i + 1;
          break;
        }
        i += argIs(arg(i), "auth") ? 1 : argIs(arg(i), "auth2") ? 2 : 0;
      }
      for (int i = 0; i < num; ++i) {
        keys->push_back({first + i, resp::kKeyRW | resp::kKeyAccess | resp::kKeyDelete});
      }
      return;
    }
    case KeysProc::kGeoRadius: {
      keys->push_back({1, 0});
      int stored = 0;  // the last STORE / STOREDIST wins
      for (int i = 5; i < argc; ++i) {
        if ((argIs(arg(i), "store") || argIs(arg(i), "storedist")) && i + 1 < argc) {
          stored = ++i;
        }
      }
      if (stored != 0) {
        keys->push_back({stored, 0});
      }
      return;
    }
    case KeysProc::kXread: {
      int streams = -1;
      for (int i = 1; i < argc && streams < 0; ++i) {
        if (argIs(arg(i), "block") || argIs(arg(i), "count")) {
          ++i;
        } else if (argIs(arg(i), "group")) {
          i += 2;
        } else if (argIs(arg(i), "streams")) {
          streams = i;
        } else if (!argIs(arg(i), "noack")) {
          break;
        }
      }
      const int num = streams < 0 ? 0 : argc - streams - 1;
      for (int i = 0; num % 2 == 0 && i < num / 2; ++i) {
        keys->push_back({streams + 1 + i, 0});
      }
      return;
    }
    case KeysProc::kSet: {
      bool get = false;
      for (int i = 3; i < argc && !get; ++i) {
        get = argIs(arg(i), "get");
      }
      keys->push_back(
          {1, static_cast<uint16_t>(get ? resp::kKeyRW | resp::kKeyAccess | resp::kKeyUpdate
                                        : resp::kKeyOW | resp::kKeyUpdate)});
      return;
    }
    case KeysProc::kBitfield: {
      bool readonly = true;
      for (int i = 2; i < argc; ++i) {
        const int rest = argc - i - 1;
        if (argIs(arg(i), "get") && rest >= 2) {
          i += 2;
        } else if ((argIs(arg(i), "set") || argIs(arg(i), "incrby")) && rest >= 3) {
          readonly = false;
          break;
        } else if (argIs(arg(i), "overflow") && rest >= 1) {
          i += 1;
        } else {
          readonly = false;  // a syntax error: Redis assumes a write
          break;
        }
      }
      keys->push_back({1, static_cast<uint16_t>(readonly ? resp::kKeyRO | resp::kKeyAccess
                                                         : resp::kKeyRW | resp::kKeyAccess |
                                                               resp::kKeyUpdate)});
      return;
    }
  }
}

void appendKeyFlags(uint16_t flags, bool resp3, std::string* reply) {
  static constexpr std::string_view kNames[] = {
      "RO",     "RW",     "OW",      "RM",         "access",        "update",
      "insert", "delete", "not_key", "incomplete", "variable_flags"};
  std::string names;
  int n = 0;
  for (size_t bit = 0; bit < std::size(kNames); ++bit) {
    if ((flags & (1u << bit)) != 0) {
      resp::appendStatus(names, kNames[bit]);
      ++n;
    }
  }
  reply->append((resp3 ? "~" : "*") + std::to_string(n) + "\r\n");
  reply->append(names);
}

// `args`: the command whose keys are asked for (what follows COMMAND GETKEYS).
void commandGetKeys(Args args, bool with_flags, bool resp3, std::string* reply) {
  // lookupCommand: a container's subcommand by the second argument, any case.
  const resp::CommandInfo* cmd = resp::CommandTable::instance().find(args[0]);
  if (cmd != nullptr && args.size() > 1 && !cmd->subcommands.empty()) {
    const resp::CommandInfo* top = cmd;
    cmd = nullptr;
    for (const resp::CommandInfo& sub : top->subcommands) {
      if (equalsIgnoreCase(sub.name.substr(top->name.size() + 1), args[1])) {
        cmd = &sub;
      }
    }
  }
  bool has_keys = cmd != nullptr && cmd->keys_proc != resp::KeysProc::kNone;
  bool variable_flags = false;
  for (size_t i = 0; cmd != nullptr && i < cmd->redis_key_specs.size(); ++i) {
    has_keys = has_keys || (cmd->redis_key_specs[i].flags & resp::kKeyNotKey) == 0;
    variable_flags = variable_flags || (cmd->redis_key_specs[i].flags & resp::kKeyVariableFlags);
  }
  if (cmd == nullptr) {
    reply->append(resp::err::kInvalidCommand);
    return;
  }
  if (!has_keys) {
    reply->append(resp::err::kNoKeyArguments);
    return;
  }
  if (!resp::arityOk(*cmd, args.size())) {
    reply->append(resp::err::kInvalidArgumentCount);
    return;
  }
  std::vector<KeyRef> keys;
  if (variable_flags || !keysFromSpecs(*cmd, args, &keys)) {
    keys.clear();
    keysFromProc(cmd->keys_proc, args, &keys);
  }
  if (keys.empty() && !cmd->has(resp::kCmdNoMandatoryKeys)) {
    reply->append(resp::err::kInvalidArguments);
    return;
  }
  resp::appendArrayHeader(*reply, static_cast<int64_t>(keys.size()));
  for (const KeyRef& k : keys) {
    if (with_flags) {
      resp::appendArrayHeader(*reply, 2);
    }
    resp::appendBulk(*reply, args[static_cast<size_t>(k.pos)]);
    if (with_flags) {
      appendKeyFlags(k.flags, resp3, reply);
    }
  }
}

}  // namespace

void commandIntrospection(const resp::CommandInfo& cmd, std::span<const std::string_view> args,
                          bool resp3, std::string* reply) {
  switch (cmd.handler) {
    case resp::Handler::kCommand:
      commandInfo({}, reply);
      return;
    case resp::Handler::kCommandCount:
      resp::appendInteger(*reply, redisCommandCount());
      return;
    case resp::Handler::kCommandInfo:
      commandInfo(args.subspan(2), reply);
      return;
    case resp::Handler::kCommandDocs:
      commandDocs(args.subspan(2), reply);
      return;
    case resp::Handler::kCommandList:
      commandList(args, reply);
      return;
    case resp::Handler::kCommandGetKeys:
    case resp::Handler::kCommandGetKeysAndFlags:
      commandGetKeys(args.subspan(2), cmd.handler == resp::Handler::kCommandGetKeysAndFlags, resp3,
                     reply);
      return;
    case resp::Handler::kCommandHelp:
      resp::appendStatusLines(*reply, kCommandHelp);
      return;
    default:
      return;
  }
}

}  // namespace sp::session
