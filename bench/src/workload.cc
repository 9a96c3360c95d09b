// Resolves options into phases of compiled templates.
#include "workload.h"

#include <algorithm>
#include <cctype>

#include "redis_tests.h"
#include "rng.h"

namespace sp::bench {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

OpKind classify(const CommandTemplate& t) {
  const auto& argv = t.argv();
  if (argv.size() == 3 && iequals(argv[0], "set") && argv[2] == "__data__" && t.usesKey()) {
    return OpKind::kSet;
  }
  if (argv.size() == 2 && iequals(argv[0], "get") && t.usesKey()) {
    return OpKind::kGet;
  }
  return OpKind::kOther;
}

void finishPhase(Phase& phase) {
  uint32_t sum = 0;
  phase.cumulative.clear();
  for (const auto& c : phase.commands) {
    sum += c.ratio;
    phase.cumulative.push_back(sum);
  }
}

std::string replaceAll(std::string s, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

}  // namespace

bool buildWorkload(const Options& o, Workload* out, std::string* error) {
  Workload w;
  w.key_prefix = o.key_prefix;
  w.keys = o.keys;
  w.has_key_range = o.has_key_range;
  w.data_min = o.data_size_min;
  w.data_max = o.data_size_max;
  w.random_data = o.random_data;
  const size_t slack = o.random_data ? 65536 : 0;
  w.filler.assign(static_cast<size_t>(w.data_max) + slack, 'x');
  if (o.random_data) {
    Rng rng(o.seed ^ 0xda7aull);
    for (char& c : w.filler) {
      c = static_cast<char>('!' + rng.below(94));  // printable, so values stay readable
    }
  }

  TemplateEnv env;
  env.rand_int_literal = !o.has_key_range;
  env.data_fixed = !o.random_data && o.data_size_min == o.data_size_max && !o.verify;
  env.fixed_data = std::string_view(w.filler).substr(0, w.data_min);
  w.data_baked = env.data_fixed;

  auto compile = [&](const std::vector<std::string>& argv, CommandTemplate* t) {
    return CommandTemplate::compile(argv, env, t, error);
  };

  if (o.mode == WorkloadMode::kTests) {
    std::vector<size_t> selected;
    if (!selectRedisTests(o.tests, &selected, error)) {
      return false;
    }
    for (size_t index : selected) {
      const RedisTest& test = redisTests()[index];
      Phase phase;
      phase.name = std::string(test.title);
      WorkloadCommand cmd;
      cmd.row = phase.name;
      if (test.inline_command) {
        cmd.tmpl = CommandTemplate::inlineCommand(test.command);
      } else {
        std::string text(test.command);
        text = replaceAll(text, "__score__", o.has_key_range ? "__rand_int__" : "0");
        for (int i = 0; i < test.mset_keys; ++i) {
          text += " key:__rand_int__ __data__";
        }
        std::vector<std::string> argv;
        if (!CommandTemplate::split(text, &argv, error) || !compile(argv, &cmd.tmpl)) {
          return false;
        }
      }
      const bool writes = test.op == TestOp::kSet || test.op == TestOp::kWrite;
      cmd.pattern = writes ? o.set_pattern : o.get_pattern;
      cmd.kind = test.op == TestOp::kSet   ? OpKind::kSet
                 : test.op == TestOp::kGet ? OpKind::kGet
                                           : OpKind::kOther;
      phase.commands.push_back(std::move(cmd));
      finishPhase(phase);
      w.phases.push_back(std::move(phase));
    }
  } else if (o.mode == WorkloadMode::kRatio) {
    Phase phase;
    phase.name = "ALL STATS";
    phase.totals_row = true;
    if (o.ratio_set > 0) {
      WorkloadCommand set;
      set.row = "Sets";
      if (!compile({"SET", "__key__", "__data__"}, &set.tmpl)) {
        return false;
      }
      set.ratio = o.ratio_set;
      set.pattern = o.set_pattern;
      set.kind = OpKind::kSet;
      phase.commands.push_back(std::move(set));
    }
    if (o.ratio_get > 0) {
      WorkloadCommand get;
      get.row = "Gets";
      if (!compile({"GET", "__key__"}, &get.tmpl)) {
        return false;
      }
      get.ratio = o.ratio_get;
      get.pattern = o.get_pattern;
      get.kind = OpKind::kGet;
      phase.commands.push_back(std::move(get));
    }
    finishPhase(phase);
    w.phases.push_back(std::move(phase));
  } else {
    Phase phase;
    phase.name = "ALL STATS";
    phase.totals_row = o.commands.size() > 1;
    for (const CommandSpec& spec : o.commands) {
      WorkloadCommand cmd;
      if (!compile(spec.argv, &cmd.tmpl)) {
        return false;
      }
      cmd.row = cmd.tmpl.name();
      int same = 0;
      for (const auto& prev : phase.commands) {
        if (prev.tmpl.name() == cmd.tmpl.name()) {
          ++same;
        }
      }
      if (same > 0) {
        cmd.row += "#" + std::to_string(same + 1);
      }
      cmd.ratio = spec.ratio;
      cmd.pattern = spec.pattern;
      cmd.kind = classify(cmd.tmpl);
      phase.commands.push_back(std::move(cmd));
    }
    finishPhase(phase);
    w.phases.push_back(std::move(phase));
  }
  *out = std::move(w);
  return true;
}

}  // namespace sp::bench
