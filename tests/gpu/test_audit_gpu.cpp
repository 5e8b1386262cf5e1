// GPU tests of the audit (docs/integrity.md "The audit"; CTest label `gpu`, SKIPPED without a device): the audit test
// aid (tests/aids/audit) swept on the device in eager and graph mode, every point held to what labrun must say:
// work that escapes the lab's stream `escaped` naming the kernel and both streams (case C16), a fork and join `ok`,
// host waits (C17) and allocations (C18) `ok` timed live with a warning naming the call in eager mode and
// `capture_unsupported` naming it in graph mode.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "audit/audit.hpp"
#include "gpu/gpu_fixture.hpp"
#include "integrity_expect.hpp"
#include "record.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using audit_aid::Fault;
using test::points_of;
using test::source_file;
using test::testaid;

class AuditGpu : public test::GpuLabTest {};

const audit_aid::Row& row_of(const std::string& variant) {
  for (const auto& row : audit_aid::kVariants)
    if (variant == row.name) return row;
  throw std::out_of_range("no audit aid variant " + variant);
}

// The call an eager warning (and a graph capture_unsupported reason) must name, "" for none.
std::string named_call(Fault f) {
  switch (f) {
    case Fault::stream_sync: return "cudaStreamSynchronize";
    case Fault::device_sync: return "cudaDeviceSynchronize";
    case Fault::sync_copy: return "cudaMemcpy";
    case Fault::malloc_free: return "cudaMalloc";
    case Fault::malloc_host: return "cudaMallocHost";
    default: return "";
  }
}

// Sweeps the audit aid with `processes` processes (lab.processes) and holds every point to what labrun must say.
void expect_every_planted_call_named(int processes) {
  test::TempDir dir("labrun_audit_gpu");
  const std::string out = dir.file("audit.jsonl");
  const std::string command = "'" + testaid() + "' sweep '" + source_file("tests/aids/audit.yaml") +
                              "' --device cuda -q --lab launches=true --lab processes=" + std::to_string(processes) +
                              " -o '" + out + "' > '" + dir.file("log") + "' 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1);  // the escaped points fail the sweep
  const auto points = points_of(out);
  ASSERT_EQ(points.size(), 44u);
  for (const Json& p : points) {
    const std::string where = p["key"].get<std::string>();
    const std::string mode = p["axes"]["mode"];
    const std::string reason = p["reason"].is_string() ? p["reason"].get<std::string>() : "";
    const Fault f = row_of(p["variant"]).fault;
    const std::string call = named_call(f);
    if (f == Fault::late_escape) {  // eager: seen by the audit of an iteration after timing; graph: captured early
      if (mode == "graph") {
        EXPECT_EQ(p["status"], "ok") << where << ": " << reason;
      } else {
        EXPECT_EQ(p["status"], "escaped") << where << ": " << reason;
        EXPECT_NE(reason.find("kernel (anonymous namespace)::compute on stream 0x"), std::string::npos) << reason;
        EXPECT_NE(reason.find("in an iteration after timing"), std::string::npos) << reason;
        EXPECT_EQ(p["integrity"]["audit"]["state"], "failed") << where;
      }
    } else if (f == Fault::none || f == Fault::fork_join || f == Fault::racy_shared) {
      EXPECT_EQ(p["status"], "ok") << where << ": " << reason;
      EXPECT_EQ(p["integrity"]["audit"]["state"], "passed") << where;
      // The traced breakdown: the variant's kernel with its GPU time, on the lab's stream, or, forked, on its own.
      ASSERT_TRUE(p.contains("launches")) << where;
      const std::string kernel = f == Fault::racy_shared ? "(anonymous namespace)::racy_compute"
                                                         : "(anonymous namespace)::compute";
      bool compute = false;
      for (const Json& l : p["launches"])
        if (l["name"] == kernel) {
          compute = true;
          EXPECT_GT(real_from_json(l["time_s"]), 0.0) << where;
          EXPECT_NE(l["grid"], "") << where;
          if (f == Fault::fork_join) EXPECT_EQ(l["stream"].get<std::string>().rfind("0x", 0), 0u) << where;
          else EXPECT_EQ(l["stream"], "lab") << where;
        }
      EXPECT_TRUE(compute) << where << ": " << p["launches"].dump();
    } else if (f == Fault::own_stream || f == Fault::legacy_stream) {
      EXPECT_EQ(p["status"], "escaped") << where << ": " << reason;
      EXPECT_NE(reason.find("kernel (anonymous namespace)::compute on "), std::string::npos) << reason;
      EXPECT_NE(reason.find(f == Fault::own_stream ? "(a stream of the variant's)" : "the legacy default stream"),
                std::string::npos)
          << reason;
      EXPECT_NE(reason.find("which the lab's stream 0x"), std::string::npos) << reason;
    } else if (mode == "graph") {
      EXPECT_EQ(p["status"], "capture_unsupported") << where << ": " << reason;
      EXPECT_NE(reason.find(call), std::string::npos) << where << ": " << reason;
      EXPECT_NE(reason.find("(found by the audit)"), std::string::npos) << reason;
    } else {
      EXPECT_EQ(p["status"], "ok") << where << ": " << reason;
      EXPECT_EQ(p["integrity"]["audit"]["state"], "warned") << where;
      const std::string kind = f == Fault::malloc_free || f == Fault::malloc_host ? "allocation" : "undeclared_sync";
      bool warned = false;
      for (const Json& w : p["warnings"])
        warned = warned || (w["kind"] == kind && w["message"].get<std::string>().find(call) != std::string::npos);
      EXPECT_TRUE(warned) << where << " has no warning " << kind << " naming " << call;
      EXPECT_EQ(p["timing"]["method"], "cuda_events+synchronized_wall")
          << where;  // live, not queued behind the blocking kernel
      EXPECT_GE(p["timing"]["host_syncs_per_iteration"].get<double>(), 1.0) << where;
    }
    // Pooled: every process timed the point, the later ones with the first's findings (no CUPTI of their own), so
    // none of them queued an iteration that waits on the host behind the blocking kernel.
    if (processes > 1 && p["status"] == "ok")
      EXPECT_EQ(p["timing"]["processes"]["count"], processes) << where << ": " << p["timing"].dump();
  }
}

TEST_F(AuditGpu, EveryPlantedCallIsNamedInEagerAndGraphMode) { expect_every_planted_call_named(1); }

// A pool's later processes take the first process's audit (PoolAudits) instead of attaching CUPTI: every point says
// what it says in one process, and every process timed the points with host waits live.
TEST_F(AuditGpu, APoolsLaterProcessesTimeWithTheFirstProcesssFindings) { expect_every_planted_call_named(2); }

}  // namespace
}  // namespace labrun
