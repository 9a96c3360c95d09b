// Replays a fuzz corpus without libFuzzer: runs LLVMFuzzerTestOneInput over every regular file
// under the directory given as argv[1] (recursively, in sorted order) so that normal builds keep
// the corpus and the crashers found so far as regression tests. Fails when the directory is
// missing or holds no input.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path dir = argv[1];
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    std::fprintf(stderr, "%s: corpus directory %s is missing\n", argv[0], argv[1]);
    return 1;
  }
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) {
      files.push_back(it->path());
    }
  }
  if (ec) {
    std::fprintf(stderr, "%s: cannot list %s: %s\n", argv[0], argv[1], ec.message().c_str());
    return 1;
  }
  std::sort(files.begin(), files.end());
  size_t ran = 0;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], file.c_str());
      return 1;
    }
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    // Copy into an exactly sized allocation so ASAN sees reads past the end of the input.
    std::vector<uint8_t> exact(data.begin(), data.end());
    exact.shrink_to_fit();
    static const uint8_t kEmpty = 0;
    LLVMFuzzerTestOneInput(exact.empty() ? &kEmpty : exact.data(), exact.size());
    ++ran;
  }
  std::printf("%zu inputs ran from %s\n", ran, argv[1]);
  if (ran == 0) {
    std::fprintf(stderr, "%s: corpus directory %s is empty\n", argv[0], argv[1]);
    return 1;
  }
  return 0;
}
