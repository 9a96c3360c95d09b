// The CPU budget's text and its shared-CPU warnings.
#include "cpu_budget.h"

namespace sp::bench {
namespace {

struct Part {
  const char* the;    // "the proxy"
  const char* is;     // "is", "are"
  const char* whose;  // "the proxy's", "the shards'"
  const CpuList* cpus;
};

std::string listOrUnpinned(const CpuList& cpus) {
  return cpus.empty() ? "unpinned" : formatCpuList(cpus);
}

}  // namespace

std::string CpuBudget::text() const {
  if (!servers_local) {
    return "client: " + (client.empty() ? "unpinned" : describeCpus(client)) +
           " (the servers were not started by shardbench)";
  }
  if (!pinned()) {
    return "unpinned: the proxy, the shards and the client share " + describeCpus(available);
  }
  std::string out;
  for (const auto& [name, cpus] :
       {std::pair{"proxy", &proxy}, std::pair{"shards", &shards}, std::pair{"client", &client}}) {
    out += out.empty() ? "" : "; ";
    out += std::string(name) + ": " +
           (cpus->empty() ? "unpinned (" + describeCpus(available) + ")" : describeCpus(*cpus));
  }
  return out;
}

std::vector<std::string> CpuBudget::warnings() const {
  std::vector<std::string> out;
  if (!servers_local || !pinned()) {
    return out;
  }
  const Part parts[] = {{"the proxy", "is", "the proxy's", &proxy},
                        {"the shards", "are", "the shards'", &shards},
                        {"the client", "is", "the client's", &client}};
  for (size_t i = 0; i < 3; ++i) {
    for (size_t k = i + 1; k < 3; ++k) {
      const Part& a = parts[i];
      const Part& b = parts[k];
      if (!a.cpus->empty() && !b.cpus->empty()) {
        const CpuList both = commonCpus(*a.cpus, *b.cpus);
        if (!both.empty()) {
          out.push_back(std::string(a.the) + " and " + b.the + " share " + describeCpus(both));
        }
      } else if (a.cpus->empty() != b.cpus->empty()) {
        const Part& loose = a.cpus->empty() ? a : b;
        const Part& fixed = a.cpus->empty() ? b : a;
        out.push_back(std::string(loose.the) + " " + loose.is + " unpinned and may run on " +
                      fixed.whose + " " + describeCpus(*fixed.cpus));
      } else {
        out.push_back(std::string(a.the) + " and " + b.the + " are both unpinned and share " +
                      describeCpus(available));
      }
    }
  }
  return out;
}

std::string cpuBudgetMarkdown(const CpuBudget& budget) {
  std::string md = "- **CPU budget**: " + budget.text() + "\n";
  for (const auto& w : budget.warnings()) {
    md += "- **warning**: " + w + ": every number includes the contention between them\n";
  }
  return md;
}

void cpuBudgetJson(JsonWriter& j, const CpuBudget& budget) {
  j.key("cpu_budget").beginObject();
  j.field("proxy", budget.servers_local ? listOrUnpinned(budget.proxy) : "not started here");
  j.field("shards", budget.servers_local ? listOrUnpinned(budget.shards) : "not started here");
  j.field("client", listOrUnpinned(budget.client));
  j.field("available", formatCpuList(budget.available));
  j.field("text", budget.text());
  j.key("warnings").beginArray();
  for (const auto& w : budget.warnings()) {
    j.value(w);
  }
  j.endArray().endObject();
}

}  // namespace sp::bench
