// Without libFuzzer (gcc builds, CI): replays every file of the corpus
// directories given as arguments through the target, then as many
// deterministic mutations of them (byte flips, truncations, splices), so CI
// exercises the fuzz targets on every run.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  size_t mutations = 20000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--mutations=", 0) == 0) {
      mutations = std::stoul(a.substr(12));
      continue;
    }
    if (!std::filesystem::is_directory(a)) {
      std::fprintf(stderr, "replay: %s is not a directory\n", a.c_str());
      return 2;
    }
    for (const auto& e : std::filesystem::directory_iterator(a)) {
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      inputs.push_back(ss.str());
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: empty corpus\n");
    return 2;
  }
  for (const auto& in : inputs) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(in.data()), in.size());
  }
  std::mt19937_64 rng(42);
  for (size_t i = 0; i < mutations; ++i) {
    std::string s = inputs[rng() % inputs.size()];
    switch (rng() % 4) {
      case 0:
        for (int k = 0; k < 4 && !s.empty(); ++k) s[rng() % s.size()] = static_cast<char>(rng());
        break;
      case 1:
        if (!s.empty()) s.resize(rng() % s.size());
        break;
      case 2: {
        const std::string& o = inputs[rng() % inputs.size()];
        if (!s.empty() && !o.empty())
          s = s.substr(0, rng() % s.size()) + o.substr(rng() % o.size());
        break;
      }
      default:
        if (!s.empty())
          s.insert(rng() % s.size(), std::string(1 + rng() % 8, static_cast<char>(rng())));
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  std::printf("replay: %zu corpus inputs and %zu mutations, no crash\n", inputs.size(), mutations);
  return 0;
}
