// A driver for the router fuzz target without libFuzzer, so that `make test` can run a short pass
// with the ordinary gcc build: every seed once, then random mutations of the seeds (no coverage
// guidance) until the time is up. Usage: router_fuzz_smoke SECONDS SEED_DIR...
// A finding aborts (router_fuzz.cc's Finding), so a non-zero exit is a failed pass.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/clock.h"

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void Run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

// Values that stress parsers and limits, spliced over or into an input.
const char* const kTokens[] = {"-1", "0", "9223372036854775807", "99999999999999999999999",
                               "1e400", "NaN", "null", "\"\"", "[]", "{}", "true", "../../etc/passwd",
                               "%00", "%2e%2e%2f", "\xff\xfe", "\"x\":", ",", "}", "{\"a\":"};

std::string Mutate(const std::vector<std::string>& seeds, std::mt19937_64& rng) {
  std::string s = seeds[rng() % seeds.size()];
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < edits; ++i) {
    const size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 6) {
      case 0:  // flip a byte
        if (!s.empty()) s[rng() % s.size()] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // delete a run
        if (!s.empty()) s.erase(rng() % s.size(), 1 + rng() % 16);
        break;
      case 2:  // insert a token
        s.insert(at, kTokens[rng() % (sizeof kTokens / sizeof *kTokens)]);
        break;
      case 3: {  // splice a piece of another seed
        const std::string& o = seeds[rng() % seeds.size()];
        if (!o.empty()) {
          const size_t from = rng() % o.size();
          s.insert(at, o.substr(from, 1 + rng() % 64));
        }
        break;
      }
      case 4:  // repeat a run (oversized fields)
        if (!s.empty()) {
          const size_t from = rng() % s.size();
          const std::string run = s.substr(from, 1 + rng() % 8);
          for (int k = 0; k < 64 && s.size() < 8192; ++k) s.insert(from, run);
        }
        break;
      default:  // replace a digit run with a token
        for (size_t k = at; k < s.size(); ++k) {
          if (s[k] >= '0' && s[k] <= '9') {
            size_t end = k;
            while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
            s.replace(k, end - k, kTokens[rng() % 5]);
            break;
          }
        }
    }
  }
  if (s.size() > 8192) s.resize(8192);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SECONDS SEED_DIR...\n", argv[0]);
    return 2;
  }
  const double seconds = std::atof(argv[1]);
  std::vector<std::string> seeds;
  for (int i = 2; i < argc; ++i) {
    if (!std::filesystem::is_directory(argv[i])) continue;
    for (const auto& e : std::filesystem::directory_iterator(argv[i])) {
      if (!e.is_regular_file()) continue;
      std::ifstream f(e.path(), std::ios::binary);
      std::stringstream b;
      b << f.rdbuf();
      seeds.push_back(b.str());
    }
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "router_fuzz_smoke: no seed files in the given directories\n");
    return 2;
  }
  LLVMFuzzerInitialize(&argc, &argv);
  for (const auto& s : seeds) Run(s);
  const uint64_t seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  det::SystemClock clock;
  const int64_t end = clock.NowMicros() + static_cast<int64_t>(seconds * 1e6);
  uint64_t runs = 0;
  while (clock.NowMicros() < end) {
    Run(Mutate(seeds, rng));
    ++runs;
  }
  std::printf("router_fuzz_smoke: %zu seeds, %llu mutated inputs in %.0f s (rng seed %llu): clean\n",
              seeds.size(), static_cast<unsigned long long>(runs), seconds,
              static_cast<unsigned long long>(seed));
  return 0;
}
