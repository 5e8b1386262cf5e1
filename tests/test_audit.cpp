// The audit's decisions (src/lab/audit.hpp) from synthetic call sequences: cases C16 (work that escapes the lab's
// stream), C17 (an undeclared host synchronisation) and C18 (an allocation inside the iteration).
#include <gtest/gtest.h>

#include "audit.hpp"
#include "integrity.hpp"
#include "lab_settings.hpp"

namespace labrun {
namespace {

constexpr TraceStream kLab = 0x5000, kOwn = 0x6000, kOther = 0x7000;

TraceCall work(TraceStream s, const std::string& name = "scale") {
  TraceCall c;
  c.kind = TraceCall::Kind::work;
  c.api = "cudaLaunchKernel";
  c.name = name;
  c.stream = s;
  return c;
}
TraceCall record(std::uint64_t event, TraceStream s) {
  TraceCall c;
  c.kind = TraceCall::Kind::event_record;
  c.api = "cudaEventRecord";
  c.event = event;
  c.stream = s;
  return c;
}
TraceCall wait(TraceStream s, std::uint64_t event) {
  TraceCall c;
  c.kind = TraceCall::Kind::stream_wait;
  c.api = "cudaStreamWaitEvent";
  c.event = event;
  c.stream = s;
  return c;
}
TraceCall sync(const std::string& api, TraceCall::SyncScope scope, TraceStream s = 0, std::uint64_t event = 0) {
  TraceCall c;
  c.kind = TraceCall::Kind::sync;
  c.api = api;
  c.scope = scope;
  c.stream = s;
  c.event = event;
  return c;
}
TraceCall memory(TraceCall::Kind kind, const std::string& api) {
  TraceCall c;
  c.kind = kind;
  c.api = api;
  return c;
}

TEST(Audit, WorkOnTheLabsStreamAloneIsClean) {
  const auto f = audit_iteration({work(kLab), work(kLab, "reduce")}, kLab);
  EXPECT_FALSE(f.any());
}

TEST(Audit, C16_AStreamOfTheVariantsNeverJoinedEscapes) {
  const auto f = audit_iteration({work(kLab), work(kOwn, "rmsnorm_rows")}, kLab);
  ASSERT_TRUE(f.escaped);
  EXPECT_EQ(*f.escaped,
            "kernel rmsnorm_rows on stream 0x6000 (a stream of the variant's), which the lab's stream 0x5000 does not "
            "wait for before the iteration ends");
  EXPECT_TRUE(f.syncs.empty());
}

TEST(Audit, C16_TheLegacyDefaultStreamEscapesUnderEitherHandle) {
  for (TraceStream legacy : {kLegacyStream, kLegacyStreamHandle}) {
    const auto f = audit_iteration({work(legacy, "rmsnorm_rows")}, kLab);
    ASSERT_TRUE(f.escaped);
    EXPECT_NE(f.escaped->find("on the legacy default stream"), std::string::npos) << *f.escaped;
  }
  const auto p = audit_iteration({work(kPerThreadStream)}, kLab);
  ASSERT_TRUE(p.escaped);
  EXPECT_NE(p.escaped->find("the per-thread default stream"), std::string::npos);
}

TEST(Audit, C16_AForkAndJoinIsLegitimate) {
  // Fork: the variant's stream waits for the lab's; join: the lab's waits for an event recorded after its work.
  const auto f = audit_iteration(
      {record(1, kLab), wait(kOwn, 1), work(kOwn), record(2, kOwn), wait(kLab, 2), work(kLab)}, kLab);
  EXPECT_FALSE(f.any()) << f.escaped.value_or("");
}

TEST(Audit, C16_AJoinBeforeTheLastLaunchLeavesThatLaunchOut) {
  const auto f = audit_iteration({work(kOwn, "first"), record(2, kOwn), wait(kLab, 2), work(kOwn, "second")}, kLab);
  ASSERT_TRUE(f.escaped);
  EXPECT_EQ(f.escaped->rfind("kernel second on", 0), 0u) << *f.escaped;
}

TEST(Audit, C16_AJoinThroughAThirdStreamCounts) {
  const auto f = audit_iteration(
      {work(kOwn), record(1, kOwn), wait(kOther, 1), work(kOther), record(2, kOther), wait(kLab, 2)}, kLab);
  EXPECT_FALSE(f.escaped) << *f.escaped;
}

TEST(Audit, C16_AnEventRecordedBeforeTheWorkDoesNotJoinIt) {
  const auto f = audit_iteration({record(2, kOwn), work(kOwn), wait(kLab, 2)}, kLab);
  EXPECT_TRUE(f.escaped);
}

TEST(Audit, C17_AHostWaitIsASyncAndJoinsWhatItCovers) {
  const auto f = audit_iteration({work(kOwn), sync("cudaStreamSynchronize", TraceCall::SyncScope::stream, kOwn)}, kLab);
  EXPECT_FALSE(f.escaped);
  ASSERT_EQ(f.syncs.size(), 1u);
  EXPECT_EQ(f.syncs[0], "cudaStreamSynchronize");
  const auto d = audit_iteration({work(kLab), sync("cudaDeviceSynchronize", TraceCall::SyncScope::device)}, kLab);
  EXPECT_EQ(AuditFindings::summary(d.syncs), "cudaDeviceSynchronize");
  const auto e = audit_iteration(
      {work(kOwn), record(3, kOwn), sync("cudaEventSynchronize", TraceCall::SyncScope::event, 0, 3)}, kLab);
  EXPECT_FALSE(e.escaped);
  EXPECT_EQ(e.syncs.size(), 1u);
  // A synchronous copy to the host waits for the legacy default stream, not for a stream of the variant's.
  const auto m = audit_iteration({work(kLegacyStream), sync("cudaMemcpy", TraceCall::SyncScope::copy)}, kLab);
  EXPECT_FALSE(m.escaped);
  EXPECT_EQ(m.syncs, std::vector<std::string>{"cudaMemcpy"});
  const auto o = audit_iteration({work(kOwn), sync("cudaMemcpy", TraceCall::SyncScope::copy)}, kLab);
  EXPECT_TRUE(o.escaped);
}

TEST(Audit, C17_ADeclaredSyncIsNoFinding) {
  TraceCall s = sync("cudaStreamSynchronize", TraceCall::SyncScope::stream, kLab);
  s.declared = true;
  EXPECT_FALSE(audit_iteration({work(kLab), s}, kLab).any());
}

TEST(Audit, C18_AllocationsAndFreesAreNamedAndCounted) {
  const auto f = audit_iteration(
      {memory(TraceCall::Kind::alloc, "cudaMalloc"), work(kLab), memory(TraceCall::Kind::free, "cudaFree"),
       memory(TraceCall::Kind::alloc, "cudaMalloc"), memory(TraceCall::Kind::free, "cudaFree"),
       memory(TraceCall::Kind::alloc, "cudaMallocHost")},
      kLab);
  EXPECT_FALSE(f.escaped);
  EXPECT_TRUE(f.syncs.empty());
  EXPECT_EQ(AuditFindings::summary(f.allocations), "cudaMalloc (x2), cudaFree (x2), cudaMallocHost");
  TraceCall pooled = memory(TraceCall::Kind::alloc, "cudaMallocAsync");
  pooled.declared = true;  // Launch::stream_alloc's pool
  EXPECT_FALSE(audit_iteration({pooled}, kLab).any());
}

TEST(Audit, C18_AFreeWaitsForTheDeviceSoItJoinsEarlierWork) {
  const auto f = audit_iteration({work(kOwn), memory(TraceCall::Kind::free, "cudaFree")}, kLab);
  EXPECT_FALSE(f.escaped);
  EXPECT_EQ(f.allocations.size(), 1u);
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

TraceCall blocking_work(TraceStream s) {
  TraceCall c = work(s);
  c.blocking = true;
  return c;
}

TEST(Audit, C16_ABlockingStreamIsJoinedByTheLegacyStreamsHostWait) {
  // A stream made with cudaStreamCreate (blocking), then a synchronous cudaMemcpy: the copy waits for it.
  TraceCall copy;
  copy.kind = TraceCall::Kind::sync;
  copy.api = "cudaMemcpy";
  copy.scope = TraceCall::SyncScope::copy;
  const auto f = audit_iteration({blocking_work(0x6000), copy}, 0x5000);
  EXPECT_FALSE(f.escaped) << *f.escaped;
  EXPECT_EQ(f.syncs.size(), 1u);
  // Not so for a non-blocking stream of the variant's.
  TraceCall nonblocking = blocking_work(0x6000);
  nonblocking.blocking = false;
  EXPECT_TRUE(audit_iteration({nonblocking, copy}, 0x5000).escaped);
}

TEST(Audit, C18_StreamOrderedAllocationsWarnWithoutAHostWait) {
  TraceCall a;
  a.kind = TraceCall::Kind::stream_alloc;
  a.api = "cudaMallocAsync";
  TraceCall w;
  w.kind = TraceCall::Kind::work;
  w.stream = 0x6000;
  const auto f = audit_iteration({a, w}, 0x5000);
  EXPECT_EQ(f.stream_ordered, std::vector<std::string>{"cudaMallocAsync"});
  EXPECT_TRUE(f.allocations.empty());
  EXPECT_TRUE(f.escaped);  // no host wait joined the work
}

// The audit of an iteration after timing (C16-C18 after some calls): a host wait or an allocation the first
// iteration did not make fails the audit and is the point's finding; the same calls as the first's are none.
struct NoWorkload : Workload {
  void run() override {}
  CheckOutcome check(const std::function<void()>&) override { return {}; }
};

IterationAudit audited(std::vector<std::string> syncs, std::vector<std::string> allocations = {}) {
  IterationAudit a;
  a.findings = AuditFindings{};
  a.findings->syncs = std::move(syncs);
  a.findings->allocations = std::move(allocations);
  return a;
}

TEST(Audit, C17_AHostWaitThatAppearsAfterTimingFailsTheAudit) {
  NoWorkload w;
  IntegrityChecks checks(w, LabSettings{});
  ASSERT_TRUE(checks.audits());
  EXPECT_TRUE(checks.audit(audited({})).empty());
  EXPECT_EQ(checks.audit_again(audited({})), std::nullopt);
  EXPECT_EQ(checks.audit_again(std::nullopt), std::nullopt);  // graph mode: nothing new to see
  const auto found = checks.audit_again(audited({"cudaStreamSynchronize"}, {"cudaMalloc"}));
  ASSERT_TRUE(found);
  EXPECT_NE(found->find("an iteration after timing calls cudaStreamSynchronize"), std::string::npos) << *found;
  EXPECT_NE(found->find("cudaMalloc"), std::string::npos) << *found;
  EXPECT_EQ(checks.record().audit->state, CheckState::failed);
}

TEST(Audit, C17_TheFirstIterationsOwnWaitsAreNoFindingAfterTiming) {
  NoWorkload w;
  IntegrityChecks checks(w, LabSettings{});
  EXPECT_EQ(checks.audit(audited({"cudaStreamSynchronize"})).size(), 1u);  // warned, timed live
  EXPECT_EQ(checks.audit_again(audited({"cudaStreamSynchronize"})), std::nullopt);
  EXPECT_EQ(checks.record().audit->state, CheckState::warned);
  LabSettings off;
  off.audit = false;
  EXPECT_FALSE(IntegrityChecks(w, off).audits());
}

TEST(Audit, KernelNamesLoseTheirParametersButKeepTheirNamespace) {
  EXPECT_EQ(kernel_name("_ZN12_GLOBAL__N_17computeEPKfPfl"), "(anonymous namespace)::compute");
  EXPECT_EQ(kernel_name("_Z5scaleIfEvPT_l"), "scale<float>");
  EXPECT_EQ(kernel_name("void cub::DeviceReduceKernel<float>(float*, int)"), "cub::DeviceReduceKernel<float>");
  EXPECT_EQ(kernel_name("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(kernel_name(nullptr), "");
  EXPECT_EQ(kernel_name(""), "");
}

}  // namespace
}  // namespace labrun
