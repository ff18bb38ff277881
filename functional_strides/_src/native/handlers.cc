// The XLA FFI handlers of the strided copy and write (XLA:CPU) and the Python module that hands
// them to JAX: the dense row-major array of a view, out[i] = storage[base + sum_k i_k * stride_k],
// in one pass over the output, and its reverse, storage[...] = values[i] (or += values[i]), in
// place. It is the loop PyTorch and NumPy copy with, plus cache tiles for transposes, which
// XLA's own transpose emitter lacks. The parts: plan.h (the blocks of a view), movers.h (the
// loops that move them), parallel.h (the split over XLA's intra-op pool), pages.h (2 MiB pages
// for fresh outputs); README.md names their invariants.
//
// Operands: the 1-D storage (any dtype of 1, 2, 4, 8 or 16 bytes) and the offset (an int32
// or int64 scalar); a write also takes the values, dense in the view's shape, and returns the
// storage (aliased to it) updated through the view. Attributes: `sizes` and `strides`
// (int64, elements), the view with its dims coalesced and size-1 dims dropped; `below`,
// sum((n-1)*s for s < 0); `reach`, the elements the view spans. The start of the view's
// span, offset + below, is clamped into [0, n - reach], as lax.dynamic_slice clamps.

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "movers.h"
#include "pages.h"
#include "parallel.h"
#include "plan.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

using namespace functional_strides::native;  // NOLINT: the parts of this one extension

inline int64_t OffsetAt(const ffi::AnyBuffer& offset) {
  if (offset.element_type() == ffi::DataType::S64) {
    return *static_cast<const int64_t*>(offset.untyped_data());
  }
  return *static_cast<const int32_t*>(offset.untyped_data());
}

// One call: the checks, the plan, the pages of the output, the split over the pool.
// `view_base` is the storage (n elements), `dense_base` the dense array of the view's shape,
// `serial` a write through a view whose elements share slots: in row-major order (the last
// write wins), on one thread unless the view is windows (MakePlan); `order` the order of the
// blocks, `tiles` the shape of a read's tiles and `stores` how a read stores the output
// (Streams).
ffi::Error Launch(ffi::ThreadPool& pool, Kind kind, const char* what, char* view_base,
                  ffi::AnyBuffer::Dimensions sdims, int64_t es, char* dense_base, const ffi::AnyBuffer& offset,
                  ffi::Span<const int64_t> sizes, ffi::Span<const int64_t> strides, int64_t below,
                  int64_t reach, bool serial, Order order, Tiles tiles, Stores stores) {
  if (es != 1 && es != 2 && es != 4 && es != 8 && es != 16) {
    return ffi::Error::InvalidArgument(std::string(what) + ": element size must be 1, 2, 4, 8 or 16 bytes");
  }
  if (sizes.size() != strides.size() || static_cast<int64_t>(sizes.size()) > kMaxRank - 2) {
    return ffi::Error::InvalidArgument(std::string(what) + ": sizes and strides must have one rank, at most 62");
  }
  if ((offset.element_type() != ffi::DataType::S32 && offset.element_type() != ffi::DataType::S64) ||
      offset.dimensions().size() != 0) {
    return ffi::Error::InvalidArgument(std::string(what) + ": the offset must be an int32 or int64 scalar");
  }
  if (sdims.size() != 1) {
    return ffi::Error::InvalidArgument(std::string(what) + ": the storage must be 1-D");
  }
  const int64_t n = sdims[0];
  if (reach > n || reach < 1) {
    return ffi::Error::InvalidArgument(std::string(what) + ": the view spans more elements than the storage holds");
  }
  auto work = std::make_shared<Work>();
  work->kind = kind;
  work->plan = MakePlan(sizes.begin(), strides.begin(), static_cast<int64_t>(sizes.size()), es, kind == kRead,
                        serial, order, tiles);
  work->plan.stream = kind == kRead && Streams(work->plan, sizes.begin(), strides.begin(),
                                               static_cast<int64_t>(sizes.size()), es, stores);
  const int64_t start = std::clamp(OffsetAt(offset) + below, int64_t{0}, n - reach);
  work->view = view_base + (start - below) * es;
  work->dense = dense_base;
  if (kind == kRead) {  // the output, not yet touched: 2 MiB pages where the OS gives them
    int64_t bytes = es;
    for (int64_t k : sizes) bytes *= k;
    AdviseHugePages(dense_base, static_cast<size_t>(bytes));
  }
  RunSplit(pool, work, serial && !work->plan.windows);
  return ffi::Error::Success();
}

// The time spent inside the handlers since the module was loaded (steady clock, nanoseconds)
// and the calls, for benchmarks that tell a call's kernel from the runtime around it
// (handler_time() in Python).
std::atomic<int64_t> g_handler_ns{0};
std::atomic<int64_t> g_handler_calls{0};

// Adds the time from its construction to its destruction to the handlers' clock.
struct HandlerClock {
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  ~HandlerClock() {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    g_handler_ns.fetch_add(ns.count(), std::memory_order_relaxed);
    g_handler_calls.fetch_add(1, std::memory_order_relaxed);
  }
};

int64_t ElementBytes(const ffi::AnyBuffer& buffer) {
  return static_cast<int64_t>(ffi::ByteWidth(buffer.element_type()));
}

ffi::Error StridedCopy(ffi::ThreadPool pool, ffi::AnyBuffer storage, ffi::AnyBuffer offset,
                       ffi::Result<ffi::AnyBuffer> out, ffi::Span<const int64_t> sizes,
                       ffi::Span<const int64_t> strides, int64_t below, int64_t reach, int64_t order,
                       int64_t tiles, int64_t stores) {
  const HandlerClock clock;
  if (order < kAutoOrder || order > kStorageOrder) {
    return ffi::Error::InvalidArgument("strided_copy: order must be 0 (auto), 1 (dense) or 2 (storage)");
  }
  if (tiles < kAutoTiles || tiles > kWideTiles) {
    return ffi::Error::InvalidArgument("strided_copy: tiles must be 0 (auto), 1 (short), 2 (tall) or 3 (wide)");
  }
  if (stores < kAutoStores || stores > kStreamingStores) {
    return ffi::Error::InvalidArgument("strided_copy: stores must be 0 (auto), 1 (cached) or 2 (streaming)");
  }
  return Launch(pool, kRead, "strided_copy", static_cast<char*>(storage.untyped_data()), storage.dimensions(),
                ElementBytes(storage), static_cast<char*>(out->untyped_data()), offset, sizes, strides, below,
                reach, false, static_cast<Order>(order), static_cast<Tiles>(tiles), static_cast<Stores>(stores));
}

// The read with the view's strides as an operand (int32 or int64, one per dim of the output)
// rather than attributes, for calls outside jit: one compiled program per output shape reads
// every layout of that shape. The dims are coalesced here as _copy_kernel.coalesced does.
ffi::Error StridedCopyOperands(ffi::ThreadPool pool, ffi::AnyBuffer storage, ffi::AnyBuffer offset,
                               ffi::AnyBuffer strides, ffi::Result<ffi::AnyBuffer> out) {
  const HandlerClock clock;
  const auto shape = out->dimensions();
  const int64_t rank = static_cast<int64_t>(shape.size());
  const bool wide = strides.element_type() == ffi::DataType::S64;
  if ((!wide && strides.element_type() != ffi::DataType::S32) || strides.dimensions().size() != 1 ||
      strides.dimensions()[0] != rank) {
    return ffi::Error::InvalidArgument("strided_copy: strides must be int32 or int64, one per dim of the output");
  }
  std::vector<int64_t> sizes, steps;
  int64_t below = 0, reach = 1;
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t n = shape[k];
    const int64_t s = wide ? static_cast<const int64_t*>(strides.untyped_data())[k]
                           : static_cast<const int32_t*>(strides.untyped_data())[k];
    if (n == 0) return ffi::Error::Success();  // nothing to read
    if (n == 1) continue;
    if (s < 0) below += (n - 1) * s;
    reach += (n - 1) * Abs(s);
    if (!sizes.empty() && steps.back() == s * n) {  // runs on from the dim before: one dim
      sizes.back() *= n;
      steps.back() = s;
    } else {
      sizes.push_back(n);
      steps.push_back(s);
    }
  }
  return Launch(pool, kRead, "strided_copy", static_cast<char*>(storage.untyped_data()), storage.dimensions(),
                ElementBytes(storage), static_cast<char*>(out->untyped_data()), offset,
                ffi::Span<const int64_t>(sizes.data(), sizes.size()),
                ffi::Span<const int64_t>(steps.data(), steps.size()), below, reach, false, kAutoOrder,
                kAutoTiles, kAutoStores);
}

// The write: the output is the storage (aliased to it by the caller), updated in place.
ffi::Error StridedWrite(ffi::ThreadPool pool, ffi::AnyBuffer storage, ffi::AnyBuffer values,
                        ffi::AnyBuffer offset, ffi::Result<ffi::AnyBuffer> out, ffi::Span<const int64_t> sizes,
                        ffi::Span<const int64_t> strides, int64_t below, int64_t reach, int64_t mode,
                        bool serial) {
  const HandlerClock clock;
  if (mode < kSet || mode > kAddI64) {
    return ffi::Error::InvalidArgument("strided_write: unknown mode");
  }
  char* target = static_cast<char*>(out->untyped_data());
  if (target != storage.untyped_data()) {  // not aliased: start from a copy of the storage
    AdviseHugePages(target, storage.size_bytes());
    std::memcpy(target, storage.untyped_data(), storage.size_bytes());
  }
  return Launch(pool, static_cast<Kind>(mode), "strided_write", target, out->dimensions(), ElementBytes(storage),
                static_cast<char*>(values.untyped_data()), offset, sizes, strides, below, reach, serial,
                serial ? kDenseOrder : kStorageOrder, kAutoTiles, kCachedStores);
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(FsStridedCopy, StridedCopy,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<ffi::Span<const int64_t>>("sizes")
                                  .Attr<ffi::Span<const int64_t>>("strides")
                                  .Attr<int64_t>("below")
                                  .Attr<int64_t>("reach")
                                  .Attr<int64_t>("order")
                                  .Attr<int64_t>("tiles")
                                  .Attr<int64_t>("stores"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(FsStridedCopyOperands, StridedCopyOperands,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(FsStridedWrite, StridedWrite,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<ffi::Span<const int64_t>>("sizes")
                                  .Attr<ffi::Span<const int64_t>>("strides")
                                  .Attr<int64_t>("below")
                                  .Attr<int64_t>("reach")
                                  .Attr<int64_t>("mode")
                                  .Attr<bool>("serial"));

// The Python module: strided_copy(), strided_copy_operands() and strided_write() return the
// handlers as capsules, for jax.ffi.register_ffi_target.
template <XLA_FFI_Handler* handler>
PyObject* Capsule(PyObject*, PyObject*) {
  return PyCapsule_New(reinterpret_cast<void*>(handler), nullptr, nullptr);
}

PyObject* HandlerTime(PyObject*, PyObject*) {
  return Py_BuildValue("(Ld)", static_cast<long long>(g_handler_calls.load()), g_handler_ns.load() * 1e-9);
}

PyObject* Stats(PyObject*, PyObject*) {
  return Py_BuildValue("{sLsdsLsLsLsLsisL}", "calls", static_cast<long long>(g_handler_calls.load()),
                       "seconds", g_handler_ns.load() * 1e-9,
                       "tasks_scheduled", static_cast<long long>(g_tasks_scheduled.load()),
                       "tasks_joined", static_cast<long long>(g_tasks_joined.load()),
                       "calls_alone", static_cast<long long>(g_calls_alone.load()),
                       "pool_threads", static_cast<long long>(g_pool_threads.load()),
                       "max_parts", g_max_parts.load(),
                       "advised_bytes", static_cast<long long>(g_advised_bytes.load()));
}

// Benchmarks' switches, process-wide: the minimum work per part of a call (bytes of traffic;
// returns the previous value) and the advice of huge pages for outputs (returns the previous).
PyObject* SetTaskMinBytes(PyObject*, PyObject* arg) {
  const long long value = PyLong_AsLongLong(arg);
  if (value == -1 && PyErr_Occurred()) return nullptr;
  if (value < 1) {
    PyErr_SetString(PyExc_ValueError, "_set_task_min_bytes: the minimum work per part must be >= 1 byte");
    return nullptr;
  }
  return PyLong_FromLongLong(g_task_min_bytes.exchange(value));
}

PyObject* SetMaxParts(PyObject*, PyObject* arg) {
  const long long value = PyLong_AsLongLong(arg);
  if (value == -1 && PyErr_Occurred()) return nullptr;
  if (value < 1 || value > kMaxThreads) {
    PyErr_SetString(PyExc_ValueError, "_set_max_parts: the most threads of a call must be 1 to 64");
    return nullptr;
  }
  return PyLong_FromLongLong(g_max_parts.exchange(static_cast<int>(value)));
}

PyObject* SetAdviseHugePages(PyObject*, PyObject* arg) {
  const int value = PyObject_IsTrue(arg);
  if (value < 0) return nullptr;
  return PyBool_FromLong(g_advise_huge_pages.exchange(value != 0));
}

static PyMethodDef kMethods[] = {
    {"strided_copy", Capsule<FsStridedCopy>, METH_NOARGS,
     "strided_copy() -> capsule: the XLA FFI handler of the strided copy (XLA:CPU)."},
    {"strided_copy_operands", Capsule<FsStridedCopyOperands>, METH_NOARGS,
     "strided_copy_operands() -> capsule: the strided copy with strides as an operand (XLA:CPU)."},
    {"strided_write", Capsule<FsStridedWrite>, METH_NOARGS,
     "strided_write() -> capsule: the XLA FFI handler of the strided write (XLA:CPU)."},
    {"handler_time", HandlerTime, METH_NOARGS,
     "handler_time() -> (calls, seconds): the calls of the three handlers since the module was loaded and "
     "the time spent inside them (steady clock), to tell a call's kernel from the runtime around it."},
    {"stats", Stats, METH_NOARGS,
     "stats() -> dict: calls and seconds (as handler_time), tasks_scheduled on XLA's intra-op pool, "
     "tasks_joined (those that found chunks left), calls_alone (calls on a pool worker or in a forked child, run alone)"
     ", pool_threads (the pool's size at the latest call, -1 before any), max_parts "
     "(the cap set by _set_max_parts) and advised_bytes (of outputs advised to take 2 MiB pages)."},
    {"_set_max_parts", SetMaxParts, METH_O,
     "_set_max_parts(n) -> previous: the most threads (the calling one and the pool's) one call runs on, "
     "1 to 64 (fs.config's kernel_threads; 64 where that is 0, as many as the pool has)."},
    {"_set_task_min_bytes", SetTaskMinBytes, METH_O,
     "_set_task_min_bytes(n) -> previous: the minimum memory traffic (bytes) per part of a call, for "
     "benchmarks."},
    {"_set_advise_huge_pages", SetAdviseHugePages, METH_O,
     "_set_advise_huge_pages(flag) -> previous: whether outputs are advised to take 2 MiB pages, for "
     "benchmarks."},
    {nullptr, nullptr, 0, nullptr}};

static PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_copy_native",
                              "The strided copy of functional_strides as an XLA:CPU FFI handler.", -1,
                              kMethods};

PyMODINIT_FUNC PyInit__copy_native(void) {
  static const bool registered = [] {
    return pthread_atfork(nullptr, nullptr, [] { g_forked.store(true, std::memory_order_relaxed); }) == 0;
  }();
  (void)registered;
  return PyModule_Create(&kModule);
}
