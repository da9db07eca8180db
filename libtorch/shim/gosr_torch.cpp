// gosr_torch.cpp: ATen kernels behind gosr's graph executor and memory
// planner. gosr loads this library at run time through purego (no cgo);
// the Makefile's `libtorch` target builds it against Debian's
// libtorch-dev.
//
// Tensors cross without copying: each call context keeps an at::Tensor
// per gosr tensor, made with from_blob over gosr's (planned) memory and
// remade only when the pointer or geometry changes. Hot ops call ATen's
// out variants straight into gosr's output tensors, as PyTorch's Static
// Runtime does; every other op is a boxed call through the dispatcher by
// schema (what the JIT interpreter does), whose new tensors are copied
// into the memory gosr planned for them.
#include "gosr_torch.h"

#include <ATen/ATen.h>
#include <ATen/CPUFunctions.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/api/include/torch/version.h>

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

#define GOSR_STR2(x) #x
#define GOSR_STR(x) GOSR_STR2(x)

// Intra-op thread counts are per OS thread under OpenMP (omp_set_num_threads
// sets the calling thread's ICV), and goroutines move between threads: so
// each thread sets it on its first call.
// One thread_local (one TLS lookup per call from a dlopen'ed library).
struct ThreadState {
  int threads = 0;
  bool inference = false;
};
thread_local ThreadState tl;

// Every thread that calls into ATen from gosr runs in inference mode
// (no autograd keys, as Static Runtime runs): set once per thread and
// never unset, since an InferenceMode guard per call costs more than
// many a small kernel. Go's threads run no other ATen code.
inline void thread_setup(int threads) {
  ThreadState& t = tl;
  if (__builtin_expect(t.threads == threads, 1)) return;
  if (!t.inference) {
    new c10::InferenceMode();  // leaked on purpose: the mode stays on
    t.inference = true;
  }
  at::set_num_threads(threads);
  t.threads = threads;
}

struct Ctx;
using FuncFn = std::vector<at::Tensor> (*)(Ctx&);
using OutFn = void (*)(Ctx&);

struct Op {
  std::string name, overload;
  c10::OperatorHandle handle;
  FuncFn func = nullptr;  // specialized functional call
  OutFn out = nullptr;    // specialized out-variant call
  std::string rets;
  explicit Op(c10::OperatorHandle h) : handle(std::move(h)) {}
};

std::mutex g_mu;
std::vector<std::unique_ptr<Op>> g_ops;
std::unordered_map<std::string, int64_t> g_op_ids;  // "name.overload"
std::unordered_map<std::string, std::vector<std::string>> g_overloads;

struct Slot {
  gosr_tensor seen;
  bool valid = false;
  at::Tensor t;
};

struct Ctx {
  gosr_hdr hdr;  // first: Go holds a pointer to it
  Op* op;
  int threads = 1;
  std::vector<gosr_tensor> tensors;
  std::vector<gosr_arg> args;
  std::vector<gosr_ret> rets;
  std::vector<Slot> slots;  // parallel to tensors
  std::vector<at::Tensor> pending;  // new tensors waiting for gosr_finish
  std::vector<std::vector<int64_t>> ret_ints;
  std::vector<std::vector<double>> ret_doubles;
  std::vector<int64_t> last_sig;
  bool ready = false;  // the out variant may run (same signature as last)
  std::vector<at::Tensor> scratch;  // extra outputs of out variants
  std::vector<at::Tensor> tl;       // tensor list argument
  c10::List<c10::optional<at::Tensor>> otl;
  std::vector<at::Tensor> wrapped;  // Scalar arguments as tensors
  std::string err;
  at::Tensor none;
};

// Inline loops: memcmp's call costs more than these few words.
inline bool same_desc(const gosr_tensor& a, const gosr_tensor& b) {
  if (a.data != b.data || a.dtype != b.dtype || a.ndim != b.ndim || a.device_type != b.device_type ||
      a.device_index != b.device_index)
    return false;
  for (int64_t d = 0; d < a.ndim; d++)
    if (a.sizes[d] != b.sizes[d] || a.strides[d] != b.strides[d]) return false;
  return true;
}

std::atomic<int64_t> g_rebinds{0};

// view makes the at::Tensor over gosr's memory a descriptor names: on the
// CPU with from_blob; on a device with the device set explicitly (ATen
// would otherwise ask the driver where the pointer lives).
at::Tensor view(const gosr_tensor& d) {
  if (d.ndim < 0 || d.ndim > GOSR_MAXDIM) throw std::runtime_error("gosr: tensor rank out of range");
  auto opts = at::TensorOptions().dtype(c10::ScalarType(d.dtype));
  if (d.device_type == 0)
    return at::from_blob(d.data, at::IntArrayRef(d.sizes, d.ndim), at::IntArrayRef(d.strides, d.ndim), opts);
  c10::Device dev{c10::DeviceType(d.device_type), c10::DeviceIndex(d.device_index)};
  return at::for_blob(d.data, at::IntArrayRef(d.sizes, d.ndim))
      .strides(at::IntArrayRef(d.strides, d.ndim))
      .options(opts.device(dev))
      .target_device(dev)
      .make_tensor();
}

const at::Tensor& slot(Ctx& c, int64_t i) {
  Slot& s = c.slots[i];
  const gosr_tensor& d = c.tensors[i];
  if (!s.valid || !same_desc(s.seen, d)) {
    g_rebinds.fetch_add(1, std::memory_order_relaxed);
    s.t = view(d);
    s.seen = d;
    s.valid = true;
  }
  return s.t;
}

// on_device: some tensor of the call is off the CPU. The specialised out
// variants call at::cpu:: kernels, so such calls take the functional
// (dispatched) path and copy into gosr's outputs.
bool on_device(const Ctx& c) {
  for (int64_t i = 0; i < c.hdr.nin + c.hdr.nout; i++)
    if (c.tensors[i].device_type != 0) return true;
  return false;
}

// Argument accessors for the specialized calls.
inline const gosr_arg& A(Ctx& c, int k) { return c.args[k]; }
inline const at::Tensor& T(Ctx& c, int k) {
  const gosr_arg& a = A(c, k);
  if (a.tag == GOSR_NONE) return c.none;
  if (a.tag != GOSR_TENSOR) throw std::runtime_error("gosr: argument " + std::to_string(k) + " is not a tensor");
  return slot(c, a.i);
}
inline c10::optional<at::Tensor> OT(Ctx& c, int k) {
  if (A(c, k).tag == GOSR_NONE) return c10::nullopt;
  return T(c, k);
}
inline int64_t I(Ctx& c, int k) { return A(c, k).i; }
inline c10::optional<int64_t> OI(Ctx& c, int k) {
  if (A(c, k).tag == GOSR_NONE) return c10::nullopt;
  return A(c, k).i;
}
inline c10::optional<at::ScalarType> OST(Ctx& c, int k) {
  if (A(c, k).tag == GOSR_NONE) return c10::nullopt;
  return at::ScalarType(A(c, k).i);
}
inline double D(Ctx& c, int k) {
  const gosr_arg& a = A(c, k);
  return a.tag == GOSR_DOUBLE ? a.d : double(a.i);
}
inline bool B(Ctx& c, int k) { return A(c, k).i != 0; }
inline at::Scalar S(Ctx& c, int k) {
  const gosr_arg& a = A(c, k);
  switch (a.tag) {
    case GOSR_DOUBLE: return at::Scalar(a.d);
    case GOSR_BOOL: return at::Scalar(a.i != 0);
    default: return at::Scalar(a.i);
  }
}
inline at::IntArrayRef IL(Ctx& c, int k) {
  const gosr_arg& a = A(c, k);
  return at::IntArrayRef(static_cast<const int64_t*>(a.p), a.len);
}
inline c10::string_view Str(Ctx& c, int k) {
  const gosr_arg& a = A(c, k);
  return c10::string_view(static_cast<const char*>(a.p), a.len);
}
inline const std::vector<at::Tensor>& TL(Ctx& c, int k) {
  const gosr_arg& a = A(c, k);
  c.tl.clear();
  auto* ix = static_cast<const int64_t*>(a.p);
  for (int i = 0; i < a.len; i++) c.tl.push_back(slot(c, ix[i]));
  return c.tl;
}
inline at::Tensor& O(Ctx& c, int k) { return const_cast<at::Tensor&>(slot(c, c.hdr.nin + k)); }
inline at::Tensor& scratch(Ctx& c, size_t k) {
  while (c.scratch.size() <= k) c.scratch.emplace_back(at::empty({0}));
  return c.scratch[k];
}

using V = std::vector<at::Tensor>;

// W is argument k, a Scalar, as the 0-d "wrapped number" tensor ATen's
// Scalar overloads make of it, kept per call context and rewritten in
// place (no allocation per call).
const at::Tensor& W(Ctx& c, int k) {
  const gosr_arg& a = A(c, k);
  if (int(c.wrapped.size()) <= k) c.wrapped.resize(k + 1);
  at::Tensor& t = c.wrapped[k];
  at::ScalarType want = a.tag == GOSR_DOUBLE ? at::kDouble : a.tag == GOSR_BOOL ? at::kBool : at::kLong;
  if (!t.defined() || t.scalar_type() != want) {
    t = at::empty({}, at::TensorOptions().dtype(want));
    t.unsafeGetTensorImpl()->set_wrapped_number(true);
  }
  switch (want) {
    case at::kDouble: *t.data_ptr<double>() = a.d; break;
    case at::kBool: *t.data_ptr<bool>() = a.i != 0; break;
    default: *t.data_ptr<int64_t>() = a.i; break;
  }
  return t;
}

inline c10::optional<c10::string_view> OStr(Ctx& c, int k) {
  if (A(c, k).tag == GOSR_NONE) return c10::nullopt;
  return Str(c, k);
}

inline c10::optional<at::Scalar> OS(Ctx& c, int k) {
  if (A(c, k).tag == GOSR_NONE) return c10::nullopt;
  return S(c, k);
}

inline at::OptionalIntArrayRef OIL(Ctx& c, int k) {
  if (A(c, k).tag == GOSR_NONE) return c10::nullopt;
  return IL(c, k);
}

const c10::List<c10::optional<at::Tensor>>& OTL(Ctx& c, int k) {
  const gosr_arg& a = A(c, k);
  auto* ix = static_cast<const int64_t*>(a.p);
  c.otl.clear();
  for (int i = 0; i < a.len; i++) {
    if (ix[i] < 0)
      c.otl.push_back(c10::nullopt);
    else
      c.otl.push_back(slot(c, ix[i]));
  }
  return c.otl;
}

c10::optional<at::Tensor> contig(c10::optional<at::Tensor> t) {
  if (t) return t->contiguous();
  return t;
}

V embag(Ctx& c, int64_t padding_idx) {
  auto r = at::_embedding_bag_forward_only(T(c, 0), T(c, 1).contiguous(), T(c, 2).contiguous(), B(c, 3), I(c, 4),
                                           B(c, 5), contig(OT(c, 6)), B(c, 7), padding_idx);
  return V{std::get<0>(r), std::get<1>(r), std::get<2>(r), std::get<3>(r)};
}

void embag_out(Ctx& c, int64_t padding_idx) {
  at::_embedding_bag_forward_only_out(O(c, 0), O(c, 1), O(c, 2), O(c, 3), T(c, 0), T(c, 1).contiguous(),
                                      T(c, 2).contiguous(), B(c, 3), I(c, 4), B(c, 5), contig(OT(c, 6)), B(c, 7),
                                      padding_idx);
}

// The specialized ops: a functional call (first run at a new signature,
// to learn the output geometry) and the out-variant call (every run after).
struct Special {
  const char* key;
  FuncFn func;
  OutFn out;
};

const Special kSpecial[] = {
    {"aten::add.Tensor", [](Ctx& c) { return V{at::add(T(c, 0), T(c, 1), S(c, 2))}; },
     [](Ctx& c) { at::cpu::add_out(O(c, 0), T(c, 0), T(c, 1), S(c, 2)); }},
    {"aten::sub.Tensor", [](Ctx& c) { return V{at::sub(T(c, 0), T(c, 1), S(c, 2))}; },
     [](Ctx& c) { at::cpu::sub_out(O(c, 0), T(c, 0), T(c, 1), S(c, 2)); }},
    {"aten::mul.Tensor", [](Ctx& c) { return V{at::mul(T(c, 0), T(c, 1))}; },
     [](Ctx& c) { at::cpu::mul_out(O(c, 0), T(c, 0), T(c, 1)); }},
    {"aten::div.Tensor", [](Ctx& c) { return V{at::div(T(c, 0), T(c, 1))}; },
     [](Ctx& c) { at::cpu::div_out(O(c, 0), T(c, 0), T(c, 1)); }},
    {"aten::relu", [](Ctx& c) { return V{at::relu(T(c, 0))}; },
     [](Ctx& c) { at::cpu::threshold_out(O(c, 0), T(c, 0), 0, 0); }},
    {"aten::sigmoid", [](Ctx& c) { return V{at::sigmoid(T(c, 0))}; },
     [](Ctx& c) { at::cpu::sigmoid_out(O(c, 0), T(c, 0)); }},
    {"aten::tanh", [](Ctx& c) { return V{at::tanh(T(c, 0))}; },
     [](Ctx& c) { at::cpu::tanh_out(O(c, 0), T(c, 0)); }},
    {"aten::gelu", [](Ctx& c) { return V{at::gelu(T(c, 0), Str(c, 1))}; },
     [](Ctx& c) { at::cpu::gelu_out(O(c, 0), T(c, 0), Str(c, 1)); }},
    {"aten::linear", [](Ctx& c) { return V{at::linear(T(c, 0), T(c, 1), OT(c, 2))}; },
     [](Ctx& c) { at::linear_out(O(c, 0), T(c, 0), T(c, 1), OT(c, 2)); }},
    {"aten::addmm", [](Ctx& c) { return V{at::addmm(T(c, 0), T(c, 1), T(c, 2), S(c, 3), S(c, 4))}; },
     [](Ctx& c) { at::cpu::addmm_out(O(c, 0), T(c, 0), T(c, 1), T(c, 2), S(c, 3), S(c, 4)); }},
    {"aten::mm", [](Ctx& c) { return V{at::mm(T(c, 0), T(c, 1))}; },
     [](Ctx& c) { at::cpu::mm_out(O(c, 0), T(c, 0), T(c, 1)); }},
    {"aten::bmm", [](Ctx& c) { return V{at::bmm(T(c, 0), T(c, 1))}; },
     [](Ctx& c) { at::cpu::bmm_out(O(c, 0), T(c, 0), T(c, 1)); }},
    {"aten::matmul", [](Ctx& c) { return V{at::matmul(T(c, 0), T(c, 1))}; },
     [](Ctx& c) { at::matmul_out(O(c, 0), T(c, 0), T(c, 1)); }},
    // Convolution and max pooling have no out variant that is not a copy
    // (ATen's own autogenerated .out copies too): oneDNN writes its own
    // buffer, which gosr copies into the planned one.
    {"aten::conv2d",
     [](Ctx& c) { return V{at::conv2d(T(c, 0), T(c, 1), OT(c, 2), IL(c, 3), IL(c, 4), IL(c, 5), I(c, 6))}; },
     [](Ctx& c) { O(c, 0).copy_(at::conv2d(T(c, 0), T(c, 1), OT(c, 2), IL(c, 3), IL(c, 4), IL(c, 5), I(c, 6))); }},
    {"aten::max_pool2d",
     [](Ctx& c) { return V{at::max_pool2d(T(c, 0), IL(c, 1), IL(c, 2), IL(c, 3), IL(c, 4), B(c, 5))}; },
     [](Ctx& c) { O(c, 0).copy_(at::max_pool2d(T(c, 0), IL(c, 1), IL(c, 2), IL(c, 3), IL(c, 4), B(c, 5))); }},
    {"aten::avg_pool2d",
     [](Ctx& c) { return V{at::avg_pool2d(T(c, 0), IL(c, 1), IL(c, 2), IL(c, 3), B(c, 4), B(c, 5), OI(c, 6))}; },
     [](Ctx& c) { at::cpu::avg_pool2d_out(O(c, 0), T(c, 0), IL(c, 1), IL(c, 2), IL(c, 3), B(c, 4), B(c, 5), OI(c, 6)); }},
    {"aten::adaptive_avg_pool2d", [](Ctx& c) { return V{at::adaptive_avg_pool2d(T(c, 0), IL(c, 1))}; },
     [](Ctx& c) { at::adaptive_avg_pool2d_out(O(c, 0), T(c, 0), IL(c, 1)); }},
    // ATen 1.13 has no CPU kernel behind native_batch_norm.out.
    {"aten::batch_norm",
     [](Ctx& c) {
       return V{at::batch_norm(T(c, 0), OT(c, 1), OT(c, 2), OT(c, 3), OT(c, 4), B(c, 5), D(c, 6), D(c, 7), B(c, 8))};
     },
     [](Ctx& c) {
       O(c, 0).copy_(at::batch_norm(T(c, 0), OT(c, 1), OT(c, 2), OT(c, 3), OT(c, 4), B(c, 5), D(c, 6), D(c, 7), B(c, 8)));
     }},
    {"aten::layer_norm",
     [](Ctx& c) { return V{at::layer_norm(T(c, 0), IL(c, 1), OT(c, 2), OT(c, 3), D(c, 4), B(c, 5))}; },
     [](Ctx& c) {
       at::native_layer_norm_out(O(c, 0), scratch(c, 0), scratch(c, 1), T(c, 0), IL(c, 1), OT(c, 2), OT(c, 3), D(c, 4));
     }},
    {"aten::softmax.int", [](Ctx& c) { return V{at::softmax(T(c, 0), I(c, 1), OST(c, 2))}; },
     [](Ctx& c) {
       if (A(c, 2).tag != GOSR_NONE) {
         O(c, 0).copy_(at::softmax(T(c, 0), I(c, 1), OST(c, 2)));
         return;
       }
       at::cpu::_softmax_out(O(c, 0), T(c, 0), I(c, 1), false);
     }},
    {"aten::embedding", [](Ctx& c) { return V{at::embedding(T(c, 0), T(c, 1), I(c, 2), B(c, 3), B(c, 4))}; },
     [](Ctx& c) { at::embedding_out(O(c, 0), T(c, 0), T(c, 1), I(c, 2), B(c, 3), B(c, 4)); }},
    // embedding_bag in inference is _embedding_bag_forward_only (what
    // at::embedding_bag calls when no gradient is wanted); its out
    // variant reads indices and offsets as contiguous.
    {"aten::embedding_bag.padding_idx",
     [](Ctx& c) { return embag(c, OI(c, 8).value_or(-1)); },
     [](Ctx& c) { embag_out(c, OI(c, 8).value_or(-1)); }},
    {"aten::embedding_bag", [](Ctx& c) { return embag(c, -1); }, [](Ctx& c) { embag_out(c, -1); }},
#define GOSR_UNARY(name, fn)                                  \
  {"aten::" #name, [](Ctx& c) { return V{at::fn(T(c, 0))}; }, \
   [](Ctx& c) { at::cpu::fn##_out(O(c, 0), T(c, 0)); }}
#define GOSR_SCALAR_BINARY(name, fn)                                            \
  {"aten::" #name ".Scalar", [](Ctx& c) { return V{at::fn(T(c, 0), S(c, 1))}; }, \
   [](Ctx& c) { at::cpu::fn##_out(O(c, 0), T(c, 0), W(c, 1)); }}
#define GOSR_COMPARE(name)                                                               \
  {"aten::" #name ".Tensor", [](Ctx& c) { return V{at::name(T(c, 0), T(c, 1))}; },        \
   [](Ctx& c) { at::cpu::name##_out(O(c, 0), T(c, 0), T(c, 1)); }},                         \
  {                                                                                       \
    "aten::" #name ".Scalar", [](Ctx& c) { return V{at::name(T(c, 0), S(c, 1))}; },       \
        [](Ctx& c) { at::cpu::name##_out(O(c, 0), T(c, 0), S(c, 1)); }                      \
  }
    {"aten::add.Scalar", [](Ctx& c) { return V{at::add(T(c, 0), S(c, 1), S(c, 2))}; },
     [](Ctx& c) { at::cpu::add_out(O(c, 0), T(c, 0), W(c, 1), S(c, 2)); }},
    {"aten::sub.Scalar", [](Ctx& c) { return V{at::sub(T(c, 0), S(c, 1), S(c, 2))}; },
     [](Ctx& c) { at::cpu::sub_out(O(c, 0), T(c, 0), W(c, 1), S(c, 2)); }},
    GOSR_SCALAR_BINARY(mul, mul),
    GOSR_SCALAR_BINARY(div, div),
    {"aten::div.Tensor_mode", [](Ctx& c) { return V{at::div(T(c, 0), T(c, 1), OStr(c, 2))}; },
     [](Ctx& c) { at::cpu::div_out(O(c, 0), T(c, 0), T(c, 1), OStr(c, 2)); }},
    {"aten::div.Scalar_mode", [](Ctx& c) { return V{at::div(T(c, 0), S(c, 1), OStr(c, 2))}; },
     [](Ctx& c) { at::cpu::div_out(O(c, 0), T(c, 0), W(c, 1), OStr(c, 2)); }},
    GOSR_COMPARE(eq),
    GOSR_COMPARE(ne),
    GOSR_COMPARE(gt),
    GOSR_COMPARE(lt),
    GOSR_COMPARE(ge),
    GOSR_COMPARE(le),
    GOSR_UNARY(neg, neg),
    GOSR_UNARY(exp, exp),
    GOSR_UNARY(log, log),
    {"aten::abs", [](Ctx& c) { return V{at::abs(T(c, 0))}; }, [](Ctx& c) { at::abs_out(O(c, 0), T(c, 0)); }},
    {"aten::pow.Tensor_Scalar", [](Ctx& c) { return V{at::pow(T(c, 0), S(c, 1))}; },
     [](Ctx& c) { at::cpu::pow_out(O(c, 0), T(c, 0), S(c, 1)); }},
    {"aten::sum.dim_IntList", [](Ctx& c) { return V{at::sum(T(c, 0), OIL(c, 1), B(c, 2), OST(c, 3))}; },
     [](Ctx& c) { at::cpu::sum_out(O(c, 0), T(c, 0), OIL(c, 1), B(c, 2), OST(c, 3)); }},
    {"aten::mean.dim", [](Ctx& c) { return V{at::mean(T(c, 0), OIL(c, 1), B(c, 2), OST(c, 3))}; },
     [](Ctx& c) { at::cpu::mean_out(O(c, 0), T(c, 0), OIL(c, 1), B(c, 2), OST(c, 3)); }},
    {"aten::clamp", [](Ctx& c) { return V{at::clamp(T(c, 0), OS(c, 1), OS(c, 2))}; },
     [](Ctx& c) { at::cpu::clamp_out(O(c, 0), T(c, 0), OS(c, 1), OS(c, 2)); }},
    {"aten::log_softmax.int", [](Ctx& c) { return V{at::log_softmax(T(c, 0), I(c, 1), OST(c, 2))}; },
     [](Ctx& c) {
       if (A(c, 2).tag != GOSR_NONE) {
         O(c, 0).copy_(at::log_softmax(T(c, 0), I(c, 1), OST(c, 2)));
         return;
       }
       at::cpu::_log_softmax_out(O(c, 0), T(c, 0), I(c, 1), false);
     }},
    {"aten::leaky_relu", [](Ctx& c) { return V{at::leaky_relu(T(c, 0), S(c, 1))}; },
     [](Ctx& c) { at::cpu::leaky_relu_out(O(c, 0), T(c, 0), S(c, 1)); }},
    {"aten::hardtanh", [](Ctx& c) { return V{at::hardtanh(T(c, 0), S(c, 1), S(c, 2))}; },
     [](Ctx& c) { at::hardtanh_out(O(c, 0), T(c, 0), S(c, 1), S(c, 2)); }},
    {"aten::argmax", [](Ctx& c) { return V{at::argmax(T(c, 0), OI(c, 1), B(c, 2))}; },
     [](Ctx& c) { at::cpu::argmax_out(O(c, 0), T(c, 0), OI(c, 1), B(c, 2)); }},
    {"aten::where.self", [](Ctx& c) { return V{at::where(T(c, 0), T(c, 1), T(c, 2))}; },
     [](Ctx& c) { at::where_out(O(c, 0), T(c, 0), T(c, 1), T(c, 2)); }},
    {"aten::index_select", [](Ctx& c) { return V{at::index_select(T(c, 0), I(c, 1), T(c, 2))}; },
     [](Ctx& c) { at::index_select_out(O(c, 0), T(c, 0), I(c, 1), T(c, 2)); }},
    {"aten::index.Tensor", [](Ctx& c) { return V{at::index(T(c, 0), OTL(c, 1))}; },
     [](Ctx& c) { at::index_out(O(c, 0), T(c, 0), OTL(c, 1)); }},
    {"aten::stack", [](Ctx& c) { return V{at::stack(TL(c, 0), I(c, 1))}; },
     [](Ctx& c) { at::stack_out(O(c, 0), TL(c, 0), I(c, 1)); }},
    {"aten::cat", [](Ctx& c) { return V{at::cat(TL(c, 0), I(c, 1))}; },
     [](Ctx& c) { at::cat_out(O(c, 0), TL(c, 0), I(c, 1)); }},
};

void set_err(char* err, int64_t errlen, const std::string& msg) {
  if (err && errlen > 0) {
    size_t n = std::min<size_t>(msg.size(), size_t(errlen - 1));
    std::memcpy(err, msg.data(), n);
    err[n] = 0;
  }
}

// Type compatibility of one node input (a code from the Go side) with one
// schema argument: -1 no, 1 with a conversion, 2 exact.
int score(const c10::TypePtr& t, char code) {
  using c10::TypeKind;
  switch (t->kind()) {
    case TypeKind::OptionalType:
      if (code == 'n') return 2;
      return score(t->expectRef<c10::OptionalType>().getElementType(), code);
    case TypeKind::TensorType: return code == 'T' ? 2 : -1;
    case TypeKind::IntType:
    case TypeKind::SymIntType: return code == 'i' ? 2 : -1;
    case TypeKind::FloatType: return code == 'f' ? 2 : code == 'i' ? 1 : -1;
    case TypeKind::NumberType: return (code == 'N' || code == 'i' || code == 'f' || code == 'b') ? 2 : -1;
    case TypeKind::BoolType: return code == 'b' ? 2 : -1;
    case TypeKind::StringType: return code == 's' ? 2 : -1;
    case TypeKind::DeviceObjType: return code == 'd' ? 2 : -1;
    case TypeKind::ListType: {
      const auto& e = t->expectRef<c10::ListType>().getElementType();
      switch (e->kind()) {
        case TypeKind::IntType:
        case TypeKind::SymIntType: return code == 'I' ? 2 : -1;
        case TypeKind::FloatType: return code == 'F' ? 2 : -1;
        case TypeKind::BoolType: return code == 'B' ? 2 : -1;
        case TypeKind::TensorType: return code == 'L' ? 2 : -1;
        case TypeKind::OptionalType:
          if (e->expectRef<c10::OptionalType>().getElementType()->kind() == TypeKind::TensorType)
            return code == 'O' ? 2 : code == 'L' ? 1 : -1;
          return -1;
        default: return -1;
      }
    }
    default: return -1;
  }
}

bool is_out_schema(const c10::FunctionSchema& s) {
  for (const auto& a : s.arguments())
    if (a.kwarg_only() && a.alias_info() && a.alias_info()->isWrite()) return true;
  return false;
}

std::string ret_codes(const c10::FunctionSchema& s) {
  std::string r;
  for (const auto& ret : s.returns()) {
    const auto& t = ret.type();
    if (t->kind() == c10::TypeKind::TensorType)
      r += ret.alias_info() ? 'A' : 'T';
    else if (t->kind() == c10::TypeKind::ListType &&
             t->expectRef<c10::ListType>().getElementType()->kind() == c10::TypeKind::TensorType)
      r += ret.alias_info() ? 'V' : 'L';  // V: views of an input (chunk, split, unbind)
    else
      r += 'o';
  }
  return r;
}

c10::IValue to_ivalue(Ctx& c, const gosr_arg& a, const c10::Argument& arg) {
  c10::TypePtr t = arg.type();
  if (t->kind() == c10::TypeKind::OptionalType) t = t->expectRef<c10::OptionalType>().getElementType();
  switch (a.tag) {
    case GOSR_NONE: return c10::IValue();
    case GOSR_TENSOR: return c10::IValue(slot(c, a.i));
    case GOSR_INT:
      if (t->kind() == c10::TypeKind::FloatType) return c10::IValue(double(a.i));
      return c10::IValue(a.i);
    case GOSR_DOUBLE: return c10::IValue(a.d);
    case GOSR_BOOL: return c10::IValue(a.i != 0);
    case GOSR_INTLIST: {
      auto* p = static_cast<const int64_t*>(a.p);
      return c10::IValue(std::vector<int64_t>(p, p + a.len));
    }
    case GOSR_DOUBLELIST: {
      auto* p = static_cast<const double*>(a.p);
      return c10::IValue(std::vector<double>(p, p + a.len));
    }
    case GOSR_BOOLLIST: {
      auto* p = static_cast<const int64_t*>(a.p);
      c10::List<bool> l;
      for (int i = 0; i < a.len; i++) l.push_back(p[i] != 0);
      return c10::IValue(l);
    }
    case GOSR_TENSORLIST: {
      auto* p = static_cast<const int64_t*>(a.p);
      c10::List<at::Tensor> l;
      for (int i = 0; i < a.len; i++) l.push_back(slot(c, p[i]));
      return c10::IValue(l);
    }
    case GOSR_OPTTENSORLIST: {
      auto* p = static_cast<const int64_t*>(a.p);
      c10::List<c10::optional<at::Tensor>> l;
      for (int i = 0; i < a.len; i++) {
        if (p[i] < 0)
          l.push_back(c10::nullopt);
        else
          l.push_back(slot(c, p[i]));
      }
      return c10::IValue(l);
    }
    case GOSR_STRING: return c10::IValue(std::string(static_cast<const char*>(a.p), a.len));
    case GOSR_DEVICE: return c10::IValue(c10::Device(std::string(static_cast<const char*>(a.p), a.len)));
  }
  throw std::runtime_error("gosr: argument " + arg.name() + ": unknown tag " + std::to_string(a.tag));
}

// The signature of a call: what decides its output geometry (dtypes,
// sizes, the other arguments). It is compared with the last call's in
// place, without building a new one; while it stays the same the out
// variant writes into the outputs gosr kept.
struct SigCheck {
  std::vector<int64_t>& v;
  size_t i = 0;
  bool same = true;
  inline void put(int64_t x) {
    if (i < v.size()) {
      if (v[i] != x) {
        v[i] = x;
        same = false;
      }
    } else {
      v.push_back(x);
      same = false;
    }
    i++;
  }
  inline void tensor(const gosr_tensor& d) {
    put(d.dtype);
    put(d.ndim);
    for (int64_t k = 0; k < d.ndim && k < GOSR_MAXDIM; k++) put(d.sizes[k]);
  }
};

// signature reports whether the call has the last call's signature, and
// records this one.
bool signature(Ctx& c) {
  SigCheck s{c.last_sig};
  for (int64_t k = 0; k < c.hdr.nargs; k++) {
    const gosr_arg& a = c.args[k];
    s.put(a.tag);
    switch (a.tag) {
      case GOSR_TENSOR: s.tensor(c.tensors[a.i]); break;
      case GOSR_INT:
      case GOSR_BOOL: s.put(a.i); break;
      case GOSR_DOUBLE: {
        int64_t bits;
        std::memcpy(&bits, &a.d, 8);
        s.put(bits);
        break;
      }
      case GOSR_INTLIST:
      case GOSR_BOOLLIST:
      case GOSR_DOUBLELIST: {
        s.put(a.len);
        auto* p = static_cast<const int64_t*>(a.p);
        for (int i = 0; i < a.len; i++) s.put(p[i]);
        break;
      }
      case GOSR_TENSORLIST:
      case GOSR_OPTTENSORLIST: {
        s.put(a.len);
        auto* p = static_cast<const int64_t*>(a.p);
        for (int i = 0; i < a.len; i++) {
          if (p[i] < 0)
            s.put(-1);
          else
            s.tensor(c.tensors[p[i]]);
        }
        break;
      }
      case GOSR_STRING:
      case GOSR_DEVICE: {
        s.put(a.len);
        auto* p = static_cast<const char*>(a.p);
        for (int i = 0; i < a.len; i++) s.put(p[i]);
        break;
      }
    }
  }
  if (s.i != c.last_sig.size()) {
    c.last_sig.resize(s.i);
    s.same = false;
  }
  return s.same;
}

void describe_tensor(Ctx& c, gosr_ret& r, const at::Tensor& t) {
  r.tag = GOSR_TENSOR;
  r.dtype = int64_t(t.scalar_type());
  r.ndim = t.dim();
  if (r.ndim > GOSR_MAXDIM) throw std::runtime_error("gosr: result of rank " + std::to_string(r.ndim) + " (at most 8)");
  for (int64_t d = 0; d < r.ndim; d++) {
    r.sizes[d] = t.size(d);
    r.strides[d] = t.stride(d);
  }
  r.alias = -1;
  r.offset = 0;
  // A view of an input: gosr makes the same view of its own tensor.
  for (int64_t s = 0; s < c.hdr.nin; s++) {
    const Slot& in = c.slots[s];
    if (in.valid && in.t.defined() && t.storage().is_alias_of(in.t.storage())) {
      r.alias = s;
      r.offset = static_cast<const char*>(t.data_ptr()) - static_cast<const char*>(in.t.data_ptr());
      return;
    }
  }
  c.pending.push_back(t);
}

void describe(Ctx& c, const std::vector<c10::IValue>& results) {
  c.rets.assign(results.size(), gosr_ret{});
  c.pending.clear();
  c.ret_ints.clear();
  c.ret_doubles.clear();
  std::vector<std::pair<size_t, const c10::List<at::Tensor>*>> lists;
  std::vector<c10::List<at::Tensor>> keep;
  keep.reserve(results.size());
  for (size_t k = 0; k < results.size(); k++) {
    gosr_ret& r = c.rets[k];
    const c10::IValue& v = results[k];
    r.alias = -1;
    if (v.isTensor()) {
      if (!v.toTensor().defined()) {
        r.tag = GOSR_NONE;
        continue;
      }
      describe_tensor(c, r, v.toTensor());
    } else if (v.isNone()) {
      r.tag = GOSR_NONE;
    } else if (v.isInt()) {
      r.tag = GOSR_INT;
      r.i = v.toInt();
    } else if (v.isDouble()) {
      r.tag = GOSR_DOUBLE;
      r.d = v.toDouble();
    } else if (v.isBool()) {
      r.tag = GOSR_BOOL;
      r.i = v.toBool();
    } else if (v.isIntList()) {
      c.ret_ints.push_back(v.toIntVector());
      r.tag = GOSR_INTLIST;
      r.len = int32_t(c.ret_ints.back().size());
    } else if (v.isDoubleList()) {
      c.ret_doubles.push_back(v.toDoubleVector());
      r.tag = GOSR_DOUBLELIST;
      r.len = int32_t(c.ret_doubles.back().size());
    } else if (v.isTensorList()) {
      keep.push_back(v.toTensorList());
      lists.emplace_back(k, &keep.back());
    } else {
      throw std::runtime_error("gosr: result " + std::to_string(k) + " is a " + v.tagKind() +
                               ", which gosr does not take from libtorch");
    }
  }
  // List pointers only once the vectors stop growing.
  size_t ni = 0, nd = 0;
  for (auto& r : c.rets) {
    if (r.tag == GOSR_INTLIST) r.p = c.ret_ints[ni++].data();
    if (r.tag == GOSR_DOUBLELIST) r.p = c.ret_doubles[nd++].data();
  }
  for (auto& [k, l] : lists) {
    size_t first = c.rets.size();
    c.rets[k].tag = GOSR_TENSORLIST;
    c.rets[k].len = int32_t(l->size());
    c.rets[k].i = int64_t(first);
    for (size_t e = 0; e < l->size(); e++) {
      c.rets.push_back(gosr_ret{});
      describe_tensor(c, c.rets.back(), (*l)[e]);
    }
  }
  c.hdr.rets = c.rets.data();
  c.hdr.nrets = int64_t(results.size());
}

int64_t fail(Ctx& c, const char* what) {
  c.err = what;
  c.ready = false;
  c.pending.clear();
  return -1;
}

}  // namespace

extern "C" {

const char* gosr_shim_info(void) {
  static const std::string info = std::string("gosr-torch abi=") + GOSR_STR(GOSR_TORCH_ABI) +
                                  " torch=" + GOSR_STR(TORCH_VERSION_MAJOR) + "." +
                                  GOSR_STR(TORCH_VERSION_MINOR) + "." + GOSR_STR(TORCH_VERSION_PATCH);
  return info.c_str();
}

const char* gosr_torch_library(void) {
  static std::string path;
  Dl_info dl;
  if (path.empty() && dladdr(reinterpret_cast<void*>(&at::get_num_threads), &dl) && dl.dli_fname)
    path = dl.dli_fname;
  return path.c_str();
}

int64_t gosr_init(int64_t threads, char* err, int64_t errlen) {
  try {
    thread_setup(threads < 1 ? 1 : int(threads));
    return 0;
  } catch (const std::exception& e) {
    set_err(err, errlen, e.what());
    return -1;
  }
}

int64_t gosr_cuda_device_count(void) {
  try {
    if (!at::hasCUDA()) return 0;
    return at::getNumGPUs();
  } catch (...) {
    return 0;
  }
}

int64_t gosr_resolve(const char* name, const char* codes, char* info, int64_t infolen) {
  try {
    std::lock_guard<std::mutex> lock(g_mu);
    auto& d = c10::Dispatcher::singleton();
    if (g_overloads.empty()) {
      for (const auto& on : d.getAllOpNames()) g_overloads[on.name].push_back(on.overload_name);
    }
    auto it = g_overloads.find(name);
    if (it == g_overloads.end()) {
      set_err(info, infolen, std::string("libtorch has no op ") + name);
      return -1;
    }
    const size_t n = std::strlen(codes);
    int best = -1;
    std::string best_ov;
    c10::optional<c10::OperatorHandle> best_h;
    for (const auto& ov : it->second) {
      auto h = d.findSchema({name, ov});
      if (!h || !h->hasSchema()) continue;
      const auto& s = h->schema();
      if (is_out_schema(s) || s.arguments().size() != n || s.is_vararg()) continue;
      int total = 0;
      for (size_t k = 0; k < n && total >= 0; k++) {
        int sc = score(s.arguments()[k].type(), codes[k]);
        total = sc < 0 ? -1 : total + sc;
      }
      if (total > best) {
        best = total;
        best_ov = ov;
        best_h = h;
      }
    }
    if (!best_h) {
      std::string msg = std::string("no overload of ") + name + " takes (" + codes + "); libtorch has:";
      for (const auto& ov : it->second) {
        auto h = d.findSchema({name, ov});
        if (h && h->hasSchema()) msg += " " + toString(h->schema()) + ";";
      }
      set_err(info, infolen, msg);
      return -1;
    }
    std::string key = std::string(name) + (best_ov.empty() ? "" : "." + best_ov);
    auto id = g_op_ids.find(key);
    int64_t op;
    if (id != g_op_ids.end()) {
      op = id->second;
    } else {
      auto o = std::make_unique<Op>(*best_h);
      o->name = name;
      o->overload = best_ov;
      o->rets = ret_codes(best_h->schema());
      for (const auto& sp : kSpecial) {
        if (key == sp.key) {
          o->func = sp.func;
          o->out = sp.out;
        }
      }
      op = int64_t(g_ops.size());
      g_ops.push_back(std::move(o));
      g_op_ids[key] = op;
    }
    set_err(info, infolen, best_ov + " " + g_ops[op]->rets);
    return op;
  } catch (const std::exception& e) {
    set_err(info, infolen, e.what());
    return -1;
  }
}

int64_t gosr_specialized(int64_t op) {
  std::lock_guard<std::mutex> lock(g_mu);
  return op >= 0 && op < int64_t(g_ops.size()) && g_ops[op]->out ? 1 : 0;
}

gosr_hdr* gosr_ctx_new(int64_t op, int64_t threads) {
  Op* o;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (op < 0 || op >= int64_t(g_ops.size())) return nullptr;
    o = g_ops[op].get();
  }
  auto* c = new Ctx();
  c->op = o;
  c->threads = threads < 1 ? 1 : int(threads);
  std::memset(&c->hdr, 0, sizeof c->hdr);
  return &c->hdr;
}

void gosr_ctx_free(gosr_hdr* h) { delete reinterpret_cast<Ctx*>(h); }

int64_t gosr_ctx_reserve(gosr_hdr* h, int64_t ntensors, int64_t nargs) {
  auto& c = *reinterpret_cast<Ctx*>(h);
  if (ntensors > int64_t(c.tensors.size())) {
    c.tensors.resize(ntensors);
    c.slots.resize(ntensors);
  }
  if (nargs > int64_t(c.args.size())) c.args.resize(nargs);
  h->tensors = c.tensors.data();
  h->tensors_cap = int64_t(c.tensors.size());
  h->args = c.args.data();
  h->args_cap = int64_t(c.args.size());
  return 0;
}

const char* gosr_ctx_error(gosr_hdr* h) { return reinterpret_cast<Ctx*>(h)->err.c_str(); }

int64_t gosr_run(gosr_hdr* h) {
  auto& c = *reinterpret_cast<Ctx*>(h);
  try {
    thread_setup(c.threads);
    Op& op = *c.op;
    if (op.out && on_device(c)) {
      c.ready = false;
      V r = op.func(c);
      std::vector<c10::IValue> rs(r.begin(), r.end());
      describe(c, rs);
      return 1;
    }
    if (op.out) {
      if (signature(c) && c.ready) {
        op.out(c);
        return 0;
      }
      c.ready = false;
      V r = op.func(c);
      std::vector<c10::IValue> rs(r.begin(), r.end());
      describe(c, rs);
      return 1;
    }
    const auto& s = op.handle.schema();
    if (c.hdr.nargs != int64_t(s.arguments().size()))
      throw std::runtime_error("gosr: " + std::to_string(c.hdr.nargs) + " arguments for " + toString(s));
    torch::jit::Stack stack;
    stack.reserve(s.arguments().size());
    for (int64_t k = 0; k < c.hdr.nargs; k++) stack.push_back(to_ivalue(c, c.args[k], s.arguments()[k]));
    op.handle.callBoxed(&stack);
    describe(c, stack);
    return 1;
  } catch (const c10::Error& e) {
    return fail(c, e.what_without_backtrace());
  } catch (const std::exception& e) {
    return fail(c, e.what());
  }
}

int64_t gosr_finish(gosr_hdr* h) {
  auto& c = *reinterpret_cast<Ctx*>(h);
  try {
    thread_setup(c.threads);
    if (int64_t(c.pending.size()) != c.hdr.nout)
      throw std::runtime_error("gosr: " + std::to_string(c.hdr.nout) + " output tensors for " +
                               std::to_string(c.pending.size()) + " results");
    for (size_t k = 0; k < c.pending.size(); k++) O(c, int(k)).copy_(c.pending[k]);
    c.pending.clear();
    if (c.op->out && !on_device(c)) c.ready = true;
    return 0;
  } catch (const c10::Error& e) {
    return fail(c, e.what_without_backtrace());
  } catch (const std::exception& e) {
    return fail(c, e.what());
  }
}

int64_t gosr_alloc(int64_t device_type, int64_t device_index, int64_t nbytes, void** data, char* err,
                   int64_t errlen) {
  try {
    thread_setup(tl.threads > 0 ? tl.threads : 1);
    c10::Device dev{c10::DeviceType(device_type), c10::DeviceIndex(device_index)};
    auto t = std::make_unique<at::Tensor>(
        at::empty({std::max<int64_t>(nbytes, 1)}, at::TensorOptions().dtype(at::kByte).device(dev)));
    *data = t->data_ptr();
    return reinterpret_cast<int64_t>(t.release());
  } catch (const c10::Error& e) {
    set_err(err, errlen, e.what_without_backtrace());
  } catch (const std::exception& e) {
    set_err(err, errlen, e.what());
  }
  return 0;
}

void gosr_free(int64_t handle) { delete reinterpret_cast<at::Tensor*>(handle); }

int64_t gosr_copy(const gosr_tensor* dst, const gosr_tensor* src, char* err, int64_t errlen) {
  try {
    thread_setup(tl.threads > 0 ? tl.threads : 1);
    at::Tensor d = view(*dst);
    d.copy_(view(*src));
    return 0;
  } catch (const c10::Error& e) {
    set_err(err, errlen, e.what_without_backtrace());
  } catch (const std::exception& e) {
    set_err(err, errlen, e.what());
  }
  return -1;
}

int64_t gosr_rebinds(void) { return g_rebinds.load(); }

int64_t gosr_echo(int64_t x) { return 2 * x + 1; }

int64_t gosr_sizeof(int64_t which) {
  switch (which) {
    case 0: return sizeof(gosr_tensor);
    case 1: return sizeof(gosr_arg);
    case 2: return sizeof(gosr_ret);
    case 3: return sizeof(gosr_hdr);
  }
  return -1;
}

int64_t gosr_bench_add(int64_t n) {
  // The same work as gosr's benchmark graph: a chain of 64 1-element
  // adds, each into its own tensor, reading the previous one.
  thread_setup(1);
  constexpr int kChain = 64;
  at::Tensor y = at::ones({1});
  std::vector<at::Tensor> t;
  for (int i = 0; i <= kChain; i++) t.push_back(at::ones({1}));
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; i++) {
    int k = int(i % kChain);
    at::cpu::add_out(t[k + 1], t[k], y, 1);
  }
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}

}  // extern "C"
