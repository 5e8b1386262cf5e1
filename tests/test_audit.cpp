// The audit's decisions (src/lab/audit.hpp) from synthetic call sequences: cases C16 (work that escapes the lab's
// stream), C17 (an undeclared host synchronisation) and C18 (an allocation inside the iteration).
#include <gtest/gtest.h>

#include <cmath>

#include "audit.hpp"
#include "integrity.hpp"
#include "lab.hpp"
#include "point_record.hpp"
#include "lab_settings.hpp"

namespace labrun {
namespace {

constexpr TraceStream kLab = 0x5000, kOwn = 0x6000, kOther = 0x7000;

TraceCall work(TraceStream s, const std::string& name = "scale") {
  return TraceCall{.kind = TraceCall::Kind::work, .api = "cudaLaunchKernel", .name = name, .stream = s};
}
TraceCall record(std::uint64_t event, TraceStream s) {
  return TraceCall{.kind = TraceCall::Kind::event_record, .api = "cudaEventRecord", .stream = s, .event = event};
}
TraceCall wait(TraceStream s, std::uint64_t event) {
  return TraceCall{.kind = TraceCall::Kind::stream_wait, .api = "cudaStreamWaitEvent", .stream = s, .event = event};
}
TraceCall sync(const std::string& api, TraceCall::SyncScope scope, TraceStream s = 0, std::uint64_t event = 0) {
  return TraceCall{.kind = TraceCall::Kind::sync, .api = api, .stream = s, .event = event, .scope = scope};
}
TraceCall memory(TraceCall::Kind kind, const std::string& api) { return TraceCall{.kind = kind, .api = api}; }

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

// The audit's findings are kept in the record as data (integrity.audit_found), read back as written: the later
// processes of a lab.processes pool take their first process's instead of attaching CUPTI themselves.
TEST(Audit, TheFindingsAreKeptInTheRecordAndReadBackAsWritten) {
  NoWorkload w;
  IntegrityChecks checks(w, LabSettings{});
  IterationAudit a = audited({"cudaStreamSynchronize"}, {"cudaMalloc", "cudaFree"});
  a.findings->stream_ordered = {"cudaMallocAsync"};
  EXPECT_EQ(checks.audit(a).size(), 3u);
  ASSERT_TRUE(checks.record().audit_found);
  const Json j = to_json(checks.record());
  ASSERT_TRUE(j.contains("audit_found")) << j.dump();
  EXPECT_EQ(j["audit_found"]["syncs"], Json::array({"cudaStreamSynchronize"}));
  EXPECT_EQ(j["audit_found"]["allocations"], Json::array({"cudaMalloc", "cudaFree"}));
  EXPECT_FALSE(j["audit_found"].contains("escaped"));
  const Integrity back = integrity_from_json(j);
  ASSERT_TRUE(back.audit_found);
  EXPECT_EQ(back.audit_found->syncs, a.findings->syncs);
  EXPECT_EQ(back.audit_found->allocations, a.findings->allocations);
  EXPECT_EQ(back.audit_found->stream_ordered, a.findings->stream_ordered);
  EXPECT_EQ(to_json(back), j);
  // Nothing found is kept too (empty lists): "audited, clean" is not "not audited".
  IntegrityChecks clean(w, LabSettings{});
  EXPECT_TRUE(clean.audit(audited({})).empty());
  ASSERT_TRUE(clean.record().audit_found);
  EXPECT_EQ(to_json(clean.record())["audit_found"]["syncs"], Json::array());
  Json bad = j;
  bad["audit_found"]["syncs"] = Json::array({1});
  EXPECT_THROW(integrity_from_json(bad), ResultError);
}

TEST(Audit, APoolsLaterProcessTakesTheFirstProcesssFindingsAndSaysSo) {
  std::vector<PointRecord> first(3);
  first[0].key = "a";
  first[0].integrity.emplace();
  first[0].integrity->audit_found = AuditFindings{};
  first[0].integrity->audit_found->syncs = {"cudaDeviceSynchronize"};
  first[1].key = "b";  // not audited there (an escaped point, a crashed one): audited where it runs
  first[1].integrity.emplace();
  first[2].key = "c";
  const PoolAudits pool = pool_audits(first, 5);
  EXPECT_EQ(pool.from, "process 1 of 5 of the pool");
  ASSERT_EQ(pool.by_key.size(), 1u);
  EXPECT_EQ(pool.by_key.at("a").syncs, std::vector<std::string>{"cudaDeviceSynchronize"});
  // The later process's record: the same warnings, the state the findings give, where they come from, and no
  // audit_found of its own.
  NoWorkload w;
  IntegrityChecks checks(w, LabSettings{});
  IterationAudit taken;
  taken.findings = pool.by_key.at("a");
  taken.elsewhere = pool.from;
  const auto warnings = checks.audit(taken);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, "undeclared_sync");
  EXPECT_EQ(checks.record().audit->state, CheckState::warned);
  EXPECT_NE(checks.record().audit->reason->find("audited in process 1 of 5 of the pool"), std::string::npos);
  EXPECT_FALSE(checks.record().audit_found);
  IntegrityChecks clean(w, LabSettings{});
  IterationAudit nothing;
  nothing.findings = AuditFindings{};
  nothing.elsewhere = pool.from;
  EXPECT_TRUE(clean.audit(nothing).empty());
  EXPECT_EQ(clean.record().audit->state, CheckState::passed);
  EXPECT_EQ(clean.record().audit->reason, "audited in process 1 of 5 of the pool");
}

TEST(Audit, KernelNamesLoseTheirParametersButKeepTheirNamespace) {
  EXPECT_EQ(kernel_name("_ZN12_GLOBAL__N_17computeEPKfPfl"), "(anonymous namespace)::compute");
  EXPECT_EQ(kernel_name("_Z5scaleIfEvPT_l"), "scale<float>");
  EXPECT_EQ(kernel_name("void cub::DeviceReduceKernel<float>(float*, int)"), "cub::DeviceReduceKernel<float>");
  EXPECT_EQ(kernel_name("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(kernel_name(nullptr), "");
  EXPECT_EQ(kernel_name(""), "");
}

// The traced breakdown (launches[]): the activity records of an iteration in GPU order, each on the stream of the call
// that launched it, a library's kernel (launched by a driver call inside cuBLAS) named and shaped as the variant's.
TEST(Audit, TheTracedBreakdownNamesEveryKernelItsStreamShapeAndTime) {
  TraceCall lab_launch = work(kLab, "scale");
  lab_launch.correlation = 11;
  TraceCall library = work(kLab, "");
  library.api = "cuLaunchKernel";
  library.correlation = 12;
  TraceCall copy = work(kOwn, "memcpy DtoH");
  copy.correlation = 20;
  copy.driver_correlation = 21;  // the driver call inside the runtime copy carries the activity's id
  TraceActivity gemm{.kind = TraceActivity::Kind::kernel,
                     .name = "_Z5scaleIfEvPT_l",
                     .correlation = 12,
                     .start_ns = 5000,
                     .end_ns = 7500,
                     .grid = {128, 2, 1},
                     .block = {256, 1, 1}};
  TraceActivity first = gemm;
  first.name = "_ZN12_GLOBAL__N_17computeEPKfPfl";
  first.correlation = 11;
  first.start_ns = 1000;
  first.end_ns = 3000;
  TraceActivity d2h{.kind = TraceActivity::Kind::memcpy,
                    .name = "memcpy DtoH",
                    .correlation = 21,
                    .start_ns = 8000,
                    .end_ns = 8400,
                    .bytes = 4096};
  TraceActivity stray = d2h;  // launched by no recorded call (another API the audit does not read)
  stray.kind = TraceActivity::Kind::memset;
  stray.correlation = 99;
  stray.start_ns = 9000;
  stray.end_ns = 8000;  // a clock that went backwards reads as no time, never negative
  const auto t = launch_times({lab_launch, library, copy}, {gemm, d2h, first, stray}, kLab);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].name, "(anonymous namespace)::compute");
  EXPECT_EQ(t[0].kind, "kernel");
  EXPECT_EQ(t[0].stream, "lab");
  EXPECT_EQ(t[0].grid, "128x2x1");
  EXPECT_EQ(t[0].block, "256x1x1");
  EXPECT_DOUBLE_EQ(t[0].time_s, 2e-6);
  EXPECT_TRUE(std::isnan(t[0].bytes));
  EXPECT_EQ(t[1].name, "scale<float>");
  EXPECT_DOUBLE_EQ(t[1].time_s, 2.5e-6);
  EXPECT_EQ(t[2].name, "memcpy DtoH");
  EXPECT_EQ(t[2].stream, "0x6000");
  EXPECT_EQ(t[2].grid, "");
  EXPECT_DOUBLE_EQ(t[2].bytes, 4096);
  EXPECT_DOUBLE_EQ(t[2].time_s, 4e-7);
  EXPECT_EQ(t[3].kind, "memset");
  EXPECT_EQ(t[3].stream, "");
  EXPECT_EQ(t[3].time_s, 0.0);
}

TEST(Audit, TheTracedBreakdownNamesTheDefaultStreams) {
  TraceCall legacy = work(kLegacyStreamHandle, "k");
  legacy.correlation = 1;
  TraceCall per_thread = work(kPerThreadStream, "k");
  per_thread.correlation = 2;
  TraceActivity a;
  a.correlation = 1;
  TraceActivity b;
  b.correlation = 2;
  b.start_ns = 1;
  const auto t = launch_times({legacy, per_thread}, {a, b}, kLab);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].stream, "legacy default");
  EXPECT_EQ(t[1].stream, "per-thread default");
}

}  // namespace
}  // namespace labrun
