// HTTP GET and the Prometheus text-format reader for the metrics tests.
#include "integration/metrics_scrape.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace sp::test {

std::string httpGet(uint16_t port, const std::string& path, int* status) {
  if (status != nullptr) {
    *status = 0;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return "";
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "";
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return "";
  }
  std::string response;
  char buf[16384];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) {
      break;
    }
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      break;
    }
    response.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (body == std::string::npos || response.rfind("HTTP/1.", 0) != 0) {
    return "";
  }
  if (status != nullptr) {
    *status = std::atoi(response.c_str() + response.find(' ') + 1);
  }
  return response.substr(body + 4);
}

Scrape::Scrape(std::string text) : text_(std::move(text)) {
  std::istringstream in(text_);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    Sample s;
    size_t at = line.find_first_of("{ ");
    if (at == std::string::npos) {
      continue;
    }
    s.name = line.substr(0, at);
    if (line[at] == '{') {
      const size_t close = line.find('}', at);
      if (close == std::string::npos) {
        continue;
      }
      std::string_view labels(line.data() + at + 1, close - at - 1);
      while (!labels.empty()) {
        const size_t eq = labels.find('=');
        const size_t q1 = labels.find('"', eq);
        const size_t q2 = labels.find('"', q1 + 1);
        if (eq == std::string_view::npos || q1 == std::string_view::npos ||
            q2 == std::string_view::npos) {
          break;
        }
        s.labels[std::string(labels.substr(0, eq))] =
            std::string(labels.substr(q1 + 1, q2 - q1 - 1));
        labels.remove_prefix(std::min(labels.size(), q2 + 2));  // past `",`
      }
      at = close + 1;
    }
    s.value = std::strtod(line.c_str() + at, nullptr);
    samples_.emplace(s.name, std::move(s));
  }
}

double Scrape::sum(std::string_view name, const std::map<std::string, std::string>& labels) const {
  double total = 0;
  auto [begin, end] = samples_.equal_range(std::string(name));
  for (auto it = begin; it != end; ++it) {
    bool match = true;
    for (const auto& [k, v] : labels) {
      auto l = it->second.labels.find(k);
      match = match && l != it->second.labels.end() && l->second == v;
    }
    if (match) {
      total += it->second.value;
    }
  }
  return total;
}

size_t Scrape::count(std::string_view name,
                     const std::map<std::string, std::string>& labels) const {
  size_t n = 0;
  auto [begin, end] = samples_.equal_range(std::string(name));
  for (auto it = begin; it != end; ++it) {
    bool match = true;
    for (const auto& [k, v] : labels) {
      auto l = it->second.labels.find(k);
      match = match && l != it->second.labels.end() && l->second == v;
    }
    n += match ? 1 : 0;
  }
  return n;
}

bool Scrape::hasFamily(std::string_view name) const {
  return text_.find("# TYPE " + std::string(name) + " ") != std::string::npos;
}

Scrape scrape(uint16_t port) { return Scrape(httpGet(port, "/metrics")); }

}  // namespace sp::test
