// cuDNN loaded at run time and its fused scaled dot-product (SDPA) forward (labrun/cudnn.hpp): the raw Backend API, so
// no cuDNN header or library is needed to build labrun. The operation graph is the one cudnn-frontend 1.23 builds for a
// causal SDPA forward on a cuDNN before 9.21 (CompositeSDPANode::expand_node: the single SDPA operation takes a
// causal bound only from 9.21, and the H200's system cuDNN is 9.14): matmul, scale, the diagonal-band mask
// (GEN_INDEX, CMP_GE, BINARY_SELECT), the row normalizer as max, sub, exp, sum, log, add, div, and the second matmul.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <limits>
#include <mutex>
#include <vector>

#include <labrun/cudnn.hpp>

#include "cuda_runtime.hpp"
#include "shared_library.hpp"

namespace labrun::cudnn {

namespace {

// From cudnn_graph.h (cuDNN 9.19; the values are the cuDNN 9 ABI): the types, entry points and enum values used.
using Desc = void*;
using RawHandle = void*;
using Status = int;
using GetVersionFn = std::size_t (*)();
using GetErrorStringFn = const char* (*)(Status);
using GetLastErrorStringFn = void (*)(char*, std::size_t);
using CreateFn = Status (*)(RawHandle*);
using DestroyFn = Status (*)(RawHandle);
using SetStreamFn = Status (*)(RawHandle, cudaStream_t);
using CreateDescriptorFn = Status (*)(int, Desc*);
using DestroyDescriptorFn = Status (*)(Desc);
using SetAttributeFn = Status (*)(Desc, int, int, std::int64_t, const void*);
using GetAttributeFn = Status (*)(Desc, int, int, std::int64_t, std::int64_t*, void*);
using FinalizeFn = Status (*)(Desc);
using ExecuteFn = Status (*)(RawHandle, Desc, Desc);

enum DescriptorType : int {  // cudnnBackendDescriptorType_t
  kPointwise = 0,
  kEngine = 2,
  kEngineCfg = 3,
  kEngineHeur = 4,
  kExecutionPlan = 5,
  kOperationPointwise = 13,
  kOperationGraph = 15,
  kVariantPack = 16,
  kTensor = 17,
  kMatmul = 18,
  kOperationMatmul = 19,
  kReduction = 21,
  kOperationReduction = 22,
};
enum AttributeType : int {  // cudnnBackendAttributeType_t
  kTypeHandle = 0,
  kTypeDataType = 1,
  kTypeBoolean = 2,
  kTypeInt64 = 3,
  kTypeVoidPtr = 6,
  kTypeHeurMode = 8,
  kTypePointwiseMode = 14,
  kTypeDescriptor = 15,
  kTypeReductionOperator = 18,
};
enum Attribute : int {  // cudnnBackendAttributeName_t
  kPointwiseMode = 0,
  kPointwiseMathPrec = 1,
  kPointwiseAxis = 9,
  kHeurMode = 200,
  kHeurOperationGraph = 201,
  kHeurResults = 202,
  kEngineCfgEngine = 300,
  kPlanHandle = 400,
  kPlanEngineConfig = 401,
  kPlanWorkspaceSize = 402,
  kOpPointwiseDescriptor = 750,
  kOpPointwiseX = 751,
  kOpPointwiseB = 752,
  kOpPointwiseY = 753,
  kOpPointwiseT = 758,
  kGraphHandle = 800,
  kGraphOps = 801,
  kTensorByteAlignment = 900,
  kTensorDataType = 901,
  kTensorDimensions = 902,
  kTensorStrides = 903,
  kTensorUniqueId = 906,
  kTensorIsVirtual = 907,
  kTensorIsByValue = 908,
  kVariantPackUniqueIds = 1000,
  kVariantPackDataPointers = 1001,
  kVariantPackWorkspace = 1003,
  kEngineGlobalIndex = 1301,
  kMatmulCompType = 1500,
  kOpMatmulA = 1520,
  kOpMatmulB = 1521,
  kOpMatmulC = 1522,
  kOpMatmulDesc = 1523,
  kReductionOperator = 1600,
  kReductionCompType = 1601,
  kOpReductionX = 1610,
  kOpReductionY = 1611,
  kOpReductionDesc = 1612,
};
enum DataType : int { kFloat = 0, kInt32 = 4, kBfloat16 = 9, kBoolean = 11 };  // cudnnDataType_t
enum PointwiseMode : int {                                                     // cudnnPointwiseMode_t
  kAdd = 0,
  kMul = 1,
  kDiv = 6,
  kSub = 9,
  kExp = 13,
  kLog = 15,
  kCmpGe = 303,
  kGenIndex = 501,
  kBinarySelect = 601,
};
enum ReduceOp : int { kReduceAdd = 0, kReduceMax = 3 };  // cudnnReduceTensorOp_t
// The unique ids of the graph's non-virtual tensors, which the variant pack binds to pointers (free choices).
enum TensorUid : std::int64_t { kUidQ = 1, kUidK, kUidV, kUidO, kUidScale, kUidNegInf };
constexpr int kHeurModeA = 3;  // CUDNN_HEUR_MODE_A
constexpr Status kSuccess = 0;
constexpr Status kNotSupported = 3000;  // CUDNN_STATUS_NOT_SUPPORTED and its sub-codes 3001..3999

struct Loaded {
  Library info;
  std::string why;
  GetVersionFn get_version = nullptr;
  GetErrorStringFn error_string = nullptr;
  GetLastErrorStringFn last_error = nullptr;
  CreateFn create = nullptr;
  DestroyFn destroy = nullptr;
  SetStreamFn set_stream = nullptr;
  CreateDescriptorFn create_descriptor = nullptr;
  DestroyDescriptorFn destroy_descriptor = nullptr;
  SetAttributeFn set_attribute = nullptr;
  GetAttributeFn get_attribute = nullptr;
  FinalizeFn finalize = nullptr;
  ExecuteFn execute = nullptr;
  bool ok() const { return why.empty(); }
};

std::string version_text(std::int64_t code) {
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

template <class F>
void bind(F& f, void* so, const char* name, std::string& missing) {
  f = symbol<F>(so, name);
  if (!f) missing += (missing.empty() ? "" : ", ") + std::string(name);
}

const Loaded& loaded_once() {
  static Loaded lib;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("LABRUN_CUDNN_LIBRARY");
    lib.info.requested = env && *env ? env : "libcudnn.so.9";
    const OpenedLibrary so = open_first_library({lib.info.requested});
    if (!so.handle) {
      const char* err = dlerror();
      lib.why = lib.info.requested + " does not load" + (err ? std::string(": ") + err : std::string()) +
                (env && *env ? " (LABRUN_CUDNN_LIBRARY)" : "");
      return;
    }
    std::string missing;
    bind(lib.get_version, so.handle, "cudnnGetVersion", missing);
    bind(lib.error_string, so.handle, "cudnnGetErrorString", missing);
    bind(lib.last_error, so.handle, "cudnnGetLastErrorString", missing);
    bind(lib.create, so.handle, "cudnnCreate", missing);
    bind(lib.destroy, so.handle, "cudnnDestroy", missing);
    bind(lib.set_stream, so.handle, "cudnnSetStream", missing);
    bind(lib.create_descriptor, so.handle, "cudnnBackendCreateDescriptor", missing);
    bind(lib.destroy_descriptor, so.handle, "cudnnBackendDestroyDescriptor", missing);
    bind(lib.set_attribute, so.handle, "cudnnBackendSetAttribute", missing);
    bind(lib.get_attribute, so.handle, "cudnnBackendGetAttribute", missing);
    bind(lib.finalize, so.handle, "cudnnBackendFinalize", missing);
    bind(lib.execute, so.handle, "cudnnBackendExecute", missing);
    if (!missing.empty()) {
      lib.why = "cuDNN entry points missing in " + so.path + ": " + missing;
      return;
    }
    Dl_info where{};
    lib.info.path = dladdr(reinterpret_cast<void*>(lib.get_version), &where) && where.dli_fname
                        ? std::string(where.dli_fname)
                        : so.path;
    lib.info.version_code = static_cast<std::int64_t>(lib.get_version());
    lib.info.version = version_text(lib.info.version_code);
    if (lib.info.version_code < 90000)
      lib.why = "cuDNN " + lib.info.version + " at " + lib.info.path + " (9.0 or later)";
  });
  return lib;
}

const Loaded& loaded() {
  const Loaded& lib = loaded_once();
  if (!lib.ok()) throw CudnnError("cuDNN unavailable: " + lib.why);
  return lib;
}

// Throws CudnnError (Unsupported for the NOT_SUPPORTED class) naming the call, the status and cuDNN's message.
void check(Status s, const char* call) {
  if (s == kSuccess) return;
  const Loaded& lib = loaded();
  char message[1024] = {0};
  lib.last_error(message, sizeof message);
  std::string what = std::string(call) + " returned " + std::to_string(s) + " (" + lib.error_string(s) + ")";
  if (message[0]) what += ": " + std::string(message);
  if (s >= kNotSupported && s < kNotSupported + 1000) throw Unsupported(what);
  throw CudnnError(what);
}

}  // namespace

bool available() { return loaded_once().ok(); }
std::string unavailable_reason() { return loaded_once().why; }
const Library& library() { return loaded().info; }

struct Sdpa::Impl {
  const Loaded& lib = loaded();
  RawHandle handle = nullptr;
  std::vector<Desc> owned;  // every descriptor, destroyed in reverse
  Desc plan = nullptr, pack = nullptr;
  std::int64_t engine = -1;
  DeviceBuffer workspace;
  float scale = 1.0f,
        neg_inf = -std::numeric_limits<float>::infinity();  // by-value tensors: read from here at every execute

  ~Impl() {
    for (auto it = owned.rbegin(); it != owned.rend(); ++it) lib.destroy_descriptor(*it);
    if (handle) lib.destroy(handle);
  }
  Desc make(int type) {
    Desc d = nullptr;
    check(lib.create_descriptor(type, &d), "cudnnBackendCreateDescriptor");
    owned.push_back(d);
    return d;
  }
  void set(Desc d, int attr, int type, std::int64_t n, const void* v) {
    check(lib.set_attribute(d, attr, type, n, v), "cudnnBackendSetAttribute");
  }
  void set(Desc d, int attr, Desc v) { set(d, attr, kTypeDescriptor, 1, &v); }
  void set_type(Desc d, int attr, int data_type) { set(d, attr, kTypeDataType, 1, &data_type); }
  void finalize(Desc d, const char* what) { check(lib.finalize(d), what); }

  Desc tensor(std::int64_t uid, int type, const std::vector<std::int64_t>& dims,
              const std::vector<std::int64_t>& strides, bool is_virtual, bool by_value = false) {
    Desc t = make(kTensor);
    set_type(t, kTensorDataType, type);
    set(t, kTensorDimensions, kTypeInt64, static_cast<std::int64_t>(dims.size()), dims.data());
    set(t, kTensorStrides, kTypeInt64, static_cast<std::int64_t>(strides.size()), strides.data());
    set(t, kTensorUniqueId, kTypeInt64, 1, &uid);
    const std::int64_t alignment = 16;
    set(t, kTensorByteAlignment, kTypeInt64, 1, &alignment);
    set(t, kTensorIsVirtual, kTypeBoolean, 1, &is_virtual);
    if (by_value) set(t, kTensorIsByValue, kTypeBoolean, 1, &by_value);
    finalize(t, "cudnnBackendFinalize(tensor)");
    return t;
  }
  // y = mode(x [, b [, t]]) at math precision `precision` (axis: GEN_INDEX only).
  Desc pointwise(int mode, int precision, Desc x, Desc y, Desc b = nullptr, Desc t = nullptr, std::int64_t axis = -1) {
    Desc pw = make(kPointwise);
    set(pw, kPointwiseMode, kTypePointwiseMode, 1, &mode);
    set_type(pw, kPointwiseMathPrec, precision);
    if (mode == kGenIndex) set(pw, kPointwiseAxis, kTypeInt64, 1, &axis);
    finalize(pw, "cudnnBackendFinalize(pointwise)");
    Desc op = make(kOperationPointwise);
    set(op, kOpPointwiseDescriptor, pw);
    set(op, kOpPointwiseX, x);
    if (b) set(op, kOpPointwiseB, b);
    if (t) set(op, kOpPointwiseT, t);
    set(op, kOpPointwiseY, y);
    finalize(op, "cudnnBackendFinalize(pointwise operation)");
    return op;
  }
  Desc matmul(Desc a, Desc b, Desc c) {
    Desc mm = make(kMatmul);
    set_type(mm, kMatmulCompType, kFloat);
    finalize(mm, "cudnnBackendFinalize(matmul)");
    Desc op = make(kOperationMatmul);
    set(op, kOpMatmulA, a);
    set(op, kOpMatmulB, b);
    set(op, kOpMatmulC, c);
    set(op, kOpMatmulDesc, mm);
    finalize(op, "cudnnBackendFinalize(matmul operation)");
    return op;
  }
  Desc reduction(int op_code, Desc x, Desc y) {
    Desc r = make(kReduction);
    set(r, kReductionOperator, kTypeReductionOperator, 1, &op_code);
    set_type(r, kReductionCompType, kFloat);
    finalize(r, "cudnnBackendFinalize(reduction)");
    Desc op = make(kOperationReduction);
    set(op, kOpReductionX, x);
    set(op, kOpReductionY, y);
    set(op, kOpReductionDesc, r);
    finalize(op, "cudnnBackendFinalize(reduction operation)");
    return op;
  }

  std::vector<Desc> operations(const SdpaShape& s);
  void choose_plan(Desc graph);
};

// The operation graph. Tensors: Q, V, O [B,H,S,D] packed; K as the Kᵀ view [B,H,D,S] (strides swapped, no copy);
// the scale and −inf by value; every S x S and per-row intermediate virtual (the fused engine never writes them),
// f32 but the index tensors (INT32), the mask (BOOLEAN) and P (bf16: the second matmul's A is in the io type).
std::vector<Desc> Sdpa::Impl::operations(const SdpaShape& s) {
  const std::int64_t b = s.batch, h = s.heads, n = s.seq, d = s.dim;
  const std::vector<std::int64_t> qd{b, h, n, d}, qs{h * n * d, n * d, d, 1};
  const std::vector<std::int64_t> sd{b, h, n, n}, ss{h * n * n, n * n, n, 1};
  const std::vector<std::int64_t> rd{b, h, n, 1}, rs{h * n, n, 1, 1}, one{1, 1, 1, 1};
  std::int64_t uid = 100;
  auto scores = [&](int type) { return tensor(uid++, type, sd, ss, true); };
  auto rows = [&] { return tensor(uid++, kFloat, rd, rs, true); };
  Desc q = tensor(kUidQ, kBfloat16, qd, qs, false);
  Desc kt = tensor(kUidK, kBfloat16, {b, h, d, n}, {h * n * d, n * d, 1, d}, false);
  Desc v = tensor(kUidV, kBfloat16, qd, qs, false);
  Desc o = tensor(kUidO, kBfloat16, qd, qs, false);
  Desc scale = tensor(kUidScale, kFloat, one, one, false, true);
  std::vector<Desc> ops;
  Desc raw = scores(kFloat), scaled = scores(kFloat);
  ops.push_back(matmul(q, kt, raw));                           // Q Kᵀ
  ops.push_back(pointwise(kMul, kFloat, raw, scaled, scale));  // · scale
  Desc logits = scaled;
  if (s.causal) {  // keep where row i >= column j, else −inf
    Desc row = scores(kInt32), col = scores(kInt32), keep = scores(kBoolean), masked = scores(kFloat);
    Desc neg_inf_t = tensor(kUidNegInf, kFloat, one, one, false, true);
    ops.push_back(pointwise(kGenIndex, kFloat, scaled, row, nullptr, nullptr, 2));
    ops.push_back(pointwise(kGenIndex, kFloat, scaled, col, nullptr, nullptr, 3));
    ops.push_back(pointwise(kCmpGe, kBoolean, row, keep, col));
    ops.push_back(pointwise(kBinarySelect, kFloat, scaled, masked, neg_inf_t, keep));
    logits = masked;
  }
  Desc max = rows(), centered = scores(kFloat), e = scores(kFloat), sum = rows(), log_sum = rows(), stats = rows();
  Desc p = scores(kBfloat16);
  ops.push_back(reduction(kReduceMax, logits, max));
  ops.push_back(pointwise(kSub, kFloat, logits, centered, max));
  ops.push_back(pointwise(kExp, kFloat, centered, e));
  ops.push_back(reduction(kReduceAdd, e, sum));
  ops.push_back(pointwise(kLog, kFloat, sum, log_sum));  // the statistics, virtual: inference writes none
  ops.push_back(pointwise(kAdd, kFloat, max, stats, log_sum));
  ops.push_back(pointwise(kDiv, kFloat, e, p, sum));
  ops.push_back(matmul(p, v, o));  // P V
  return ops;
}

// Heuristics mode A, then the first engine configuration whose plan finalizes (runtime-compiled engines compile
// here). Unsupported when none does, with the last plan's message.
void Sdpa::Impl::choose_plan(Desc graph) {
  Desc heur = make(kEngineHeur);
  set(heur, kHeurOperationGraph, graph);
  set(heur, kHeurMode, kTypeHeurMode, 1, &kHeurModeA);
  finalize(heur, "cudnnBackendFinalize(engine heuristics)");
  std::int64_t count = 0;
  check(lib.get_attribute(heur, kHeurResults, kTypeDescriptor, 0, &count, nullptr), "cudnnBackendGetAttribute");
  if (count <= 0) throw Unsupported("cuDNN " + lib.info.version + ": the heuristics offer no engine for the graph");
  std::vector<Desc> configs;
  for (std::int64_t i = 0; i < count; ++i) configs.push_back(make(kEngineCfg));
  check(lib.get_attribute(heur, kHeurResults, kTypeDescriptor, count, &count, configs.data()),
        "cudnnBackendGetAttribute");
  std::string last;
  for (std::int64_t i = 0; i < count && !plan; ++i) {
    Desc candidate = make(kExecutionPlan);
    set(candidate, kPlanHandle, kTypeHandle, 1, &handle);
    set(candidate, kPlanEngineConfig, configs[static_cast<std::size_t>(i)]);
    try {
      finalize(candidate, "cudnnBackendFinalize(execution plan)");
    } catch (const CudnnError& e) {
      last = e.what();
      continue;
    }
    plan = candidate;
    Desc eng = make(kEngine);
    std::int64_t got = 0;
    check(lib.get_attribute(configs[static_cast<std::size_t>(i)], kEngineCfgEngine, kTypeDescriptor, 1, &got, &eng),
          "cudnnBackendGetAttribute(engine)");
    check(lib.get_attribute(eng, kEngineGlobalIndex, kTypeInt64, 1, &got, &engine),
          "cudnnBackendGetAttribute(engine index)");
  }
  if (!plan)
    throw Unsupported("cuDNN " + lib.info.version + ": none of " + std::to_string(count) +
                      " engine configurations builds a plan (last: " + last + ")");
}

Sdpa::Sdpa(CUstream_st* stream, const SdpaShape& s, const void* q, const void* k, const void* v, void* o)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  if (s.batch < 1 || s.heads < 1 || s.seq < 1 || s.dim < 1)
    throw std::invalid_argument("cudnn::Sdpa: batch, heads, seq and dim must be >= 1");
  m.scale = s.scale;
  check(m.lib.create(&m.handle), "cudnnCreate");
  check(m.lib.set_stream(m.handle, stream), "cudnnSetStream");
  std::vector<Desc> ops = m.operations(s);
  Desc graph = m.make(kOperationGraph);
  m.set(graph, kGraphOps, kTypeDescriptor, static_cast<std::int64_t>(ops.size()), ops.data());
  m.set(graph, kGraphHandle, kTypeHandle, 1, &m.handle);
  m.finalize(graph, "cudnnBackendFinalize(operation graph)");
  m.choose_plan(graph);
  std::int64_t ws = 0, got = 0;
  check(m.lib.get_attribute(m.plan, kPlanWorkspaceSize, kTypeInt64, 1, &got, &ws), "cudnnBackendGetAttribute");
  if (ws > 0) m.workspace = DeviceBuffer(static_cast<std::size_t>(ws));
  void* ws_ptr = m.workspace.get();
  std::vector<std::int64_t> uids{kUidQ, kUidK, kUidV, kUidO, kUidScale};
  std::vector<void*> ptrs{const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v), o, &m.scale};
  if (s.causal) {
    uids.push_back(kUidNegInf);
    ptrs.push_back(&m.neg_inf);
  }
  m.pack = m.make(kVariantPack);
  m.set(m.pack, kVariantPackUniqueIds, kTypeInt64, static_cast<std::int64_t>(uids.size()), uids.data());
  m.set(m.pack, kVariantPackDataPointers, kTypeVoidPtr, static_cast<std::int64_t>(ptrs.size()), ptrs.data());
  m.set(m.pack, kVariantPackWorkspace, kTypeVoidPtr, 1, &ws_ptr);
  m.finalize(m.pack, "cudnnBackendFinalize(variant pack)");
}

Sdpa::~Sdpa() = default;

void Sdpa::run() { check(impl_->lib.execute(impl_->handle, impl_->plan, impl_->pack), "cudnnBackendExecute"); }

std::size_t Sdpa::workspace_bytes() const { return impl_->workspace.bytes(); }

std::int64_t Sdpa::engine() const { return impl_->engine; }

}  // namespace labrun::cudnn
