// gosr_torch.h: the C ABI between gosr (Go, through purego; no cgo) and
// libtorch. The Go side mirrors these structs in libtorch/abi.go; change
// both together and bump GOSR_TORCH_ABI.
#ifndef GOSR_TORCH_H
#define GOSR_TORCH_H

#include <stdint.h>

#define GOSR_TORCH_ABI 2
#define GOSR_MAXDIM 8

#ifdef __cplusplus
extern "C" {
#endif

// A tensor gosr owns: ATen views it in place (from_blob), never copies it.
typedef struct {
  void* data;  // first element (storage + offset)
  int64_t dtype;  // c10::ScalarType
  int64_t ndim;
  int64_t sizes[GOSR_MAXDIM];
  int64_t strides[GOSR_MAXDIM];
  int32_t device_type;   // c10::DeviceType: 0 CPU, 1 CUDA
  int32_t device_index;  // -1 for the CPU
} gosr_tensor;

enum {
  GOSR_NONE = 0,
  GOSR_TENSOR = 1,      // i: tensor slot
  GOSR_INT = 2,         // i
  GOSR_DOUBLE = 3,      // d
  GOSR_BOOL = 4,        // i
  GOSR_INTLIST = 5,     // p: int64_t[len]
  GOSR_DOUBLELIST = 6,  // p: double[len]
  GOSR_TENSORLIST = 7,  // p: int64_t[len] tensor slots
  GOSR_OPTTENSORLIST = 8,  // p: int64_t[len] tensor slots, -1 = None
  GOSR_STRING = 9,      // p: char[len]
  GOSR_DEVICE = 10,     // p: char[len]
  GOSR_BOOLLIST = 11,   // p: int64_t[len]
};

// One argument of a call, or one result.
typedef struct {
  int32_t tag;
  int32_t len;
  int64_t i;
  double d;
  const void* p;
} gosr_arg;

// One result of a call. Tensors: geometry, and alias >= 0 when the result
// views input tensor slot alias (offset: bytes from that slot's data).
typedef struct {
  int32_t tag;
  int32_t len;  // lists: element count; TENSORLIST: elements follow in rets[i..i+len)
  int64_t i;
  double d;
  const void* p;
  int64_t dtype;
  int64_t ndim;
  int64_t sizes[GOSR_MAXDIM];
  int64_t strides[GOSR_MAXDIM];
  int64_t alias;
  int64_t offset;
} gosr_ret;

// The part of a call context Go reads and writes directly (C memory).
typedef struct {
  gosr_tensor* tensors;  // inputs [0, nin), outputs [nin, nin+nout)
  int64_t tensors_cap;
  gosr_arg* args;
  int64_t args_cap;
  gosr_ret* rets;
  int64_t nrets;  // main results (one per node output); list elements follow
  int64_t nargs;
  int64_t nin;
  int64_t nout;
} gosr_hdr;

const char* gosr_shim_info(void);
const char* gosr_torch_library(void);
int64_t gosr_init(int64_t threads, char* err, int64_t errlen);  // sets up the calling thread
int64_t gosr_cuda_device_count(void);

// gosr_resolve finds the overload of op name (aten::add) whose arguments
// accept the input codes (one letter per node input, see libtorch/abi.go).
// It returns an op id >= 0 and writes the overload name and one letter
// per return (T new tensor, A alias of an input, L tensor list, V list of
// views of an input, o other)
// into info; -1 when libtorch has no such op or no overload fits (info
// says why).
int64_t gosr_resolve(const char* name, const char* codes, char* info, int64_t infolen);
int64_t gosr_specialized(int64_t op);

gosr_hdr* gosr_ctx_new(int64_t op, int64_t threads);
void gosr_ctx_free(gosr_hdr* ctx);
int64_t gosr_ctx_reserve(gosr_hdr* ctx, int64_t ntensors, int64_t nargs);
const char* gosr_ctx_error(gosr_hdr* ctx);

// gosr_run runs the op: 0 when the outputs were written into the output
// tensors given, 1 when rets describe results Go must place (then
// gosr_finish copies new tensors into the output slots Go set), -1 on
// error (gosr_ctx_error).
int64_t gosr_run(gosr_hdr* ctx);
int64_t gosr_finish(gosr_hdr* ctx);

// Device memory (modules placed on a device): gosr_alloc returns a handle
// to nbytes from libtorch's allocator for the device and writes their
// address to *data (0 and err on failure); gosr_free releases it.
// gosr_copy copies src into dst (dtype converted, any devices, strided).
int64_t gosr_alloc(int64_t device_type, int64_t device_index, int64_t nbytes, void** data, char* err, int64_t errlen);
void gosr_free(int64_t handle);
int64_t gosr_copy(const gosr_tensor* dst, const gosr_tensor* src, char* err, int64_t errlen);

// gosr_echo returns 2x+1 and gosr_sizeof the size of gosr_tensor (0),
// gosr_arg (1), gosr_ret (2), gosr_hdr (3): ABI checks for the Go side.
int64_t gosr_echo(int64_t x);
// gosr_rebinds counts the at::Tensors remade because a gosr tensor's
// memory or geometry changed (steady runs should make none).
int64_t gosr_rebinds(void);
int64_t gosr_sizeof(int64_t which);

// gosr_bench_add times n calls of at::cpu::add_out on 1-element float
// tensors from C++, chained through 64 tensors as gosr's benchmark graph
// is (the floor the shim's per-call overhead is measured on).
int64_t gosr_bench_add(int64_t n);

#ifdef __cplusplus
}
#endif
#endif
