// A small Google Benchmark (Debian's libbenchmark-dev) whose JSON output the import tests read: a real file of the
// tool, made where the test runs. LABRUN_FIXTURE_WORK (a positive integer, default 1) repeats BM_Copy's work that many
// times in each iteration, so a test can plant one slower benchmark in a "commit" with the same binary.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace {

int work() {
  const char* w = std::getenv("LABRUN_FIXTURE_WORK");
  const int n = w ? std::atoi(w) : 1;
  return n > 0 ? n : 1;
}

// Sums n floats: state.range(0) = n, an unnamed argument (arg0 in labrun).
void BM_Sum(benchmark::State& state) {
  const std::vector<float> v(static_cast<std::size_t>(state.range(0)), 1.0f);
  for (auto _ : state) {
    float s = 0;
    for (float x : v) s += x;
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0) * 4);
}
BENCHMARK(BM_Sum)->Arg(1024)->Arg(2048)->Arg(4096)->Arg(8192)->Arg(16384)->Arg(32768);

// Copies n floats with named arguments (n in labrun) and the wall clock as its time.
void BM_Copy(benchmark::State& state) {
  const std::vector<float> a(static_cast<std::size_t>(state.range(0)), 2.0f);
  std::vector<float> b(a.size());
  const int repeat = work();
  for (auto _ : state) {
    for (int r = 0; r < repeat; ++r) {
      b = a;
      benchmark::DoNotOptimize(b.data());
      benchmark::ClobberMemory();
    }
  }
}
BENCHMARK(BM_Copy)->ArgName("n")->Arg(8192)->UseRealTime();

// Always fails: an entry with error_occurred (an `error` point in labrun).
void BM_Unsupported(benchmark::State& state) {
  state.SkipWithError("needs a device this machine lacks");
  for (auto _ : state) {
  }
}
BENCHMARK(BM_Unsupported);

}  // namespace

BENCHMARK_MAIN();
