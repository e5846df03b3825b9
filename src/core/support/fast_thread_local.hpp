#ifndef CUNUMPY_SRC_FAST_THREAD_LOCAL_HPP
#define CUNUMPY_SRC_FAST_THREAD_LOCAL_HPP

/// The TLS model of the recorder's hot-path variables: initial-exec, since
/// the default model of a shared library calls __tls_get_addr on every
/// access, which costs more than recording a copy. nvcc ignores it with a
/// warning: under nvcc_wrapper the library is compiled by the host compiler,
/// and the test programs nvcc compiles access the variables the default way.
#if defined(__CUDACC__)
#define CUNUMPY_FAST_TLS
#else
#define CUNUMPY_FAST_TLS __attribute__((tls_model("initial-exec")))
#endif

#include <cstddef>
#include <cstdint>

namespace cunumpy::Impl {

class ApiScope;

/// The alignment of hot_thread_locals: a cache line on x86-64, whose
/// static TLS block is aligned to one; 16 elsewhere. glibc refuses to
/// dlopen a library whose initial-exec TLS needs more alignment than that
/// block has ("cannot allocate memory in static TLS block" on aarch64),
/// and the plugin and the Python module are loaded with dlopen.
#if defined(__x86_64__)
inline constexpr std::size_t hot_thread_locals_alignment = 64;
#else
inline constexpr std::size_t hot_thread_locals_alignment = 16;
#endif

/// The thread-local words every event reads, in one cache line (where
/// aligned to one): after a time step that streams more than the caches,
/// each line an event reads is a miss, and as separate thread_local
/// variables they were spread over three lines of the library's TLS block
/// (a miss each, a heavy step).
/// For cunumpy's library's own files: a library built with hidden
/// visibility (the plugin, the Python module) that used it would have a
/// copy of its own, so a thread state of its own.
struct alignas(hot_thread_locals_alignment) HotThreadLocals {
  void* thread_state; ///< FastThreadLocal objects, nullptr until made
  void* unwinder;
  void* cuda_thread;
  ApiScope* api_scope; ///< the innermost scope (api/api_scope.cpp)
  /// Slots (tools::Slot bits) being forwarded on this thread, and slots
  /// whose event a re-entered call handled (tools/callbacks.cpp).
  std::uint32_t forwarding;
  std::uint32_t handled;
};
static_assert(sizeof(HotThreadLocals) <= 64, "the words fit one cache line");
/// Inline, so that every file sees it constant-initialized: declared
/// extern, each access first tested for a TLS init function (a load from
/// the GOT, another line).
inline thread_local HotThreadLocals hot_thread_locals CUNUMPY_FAST_TLS{};

/// One `T` per thread, reached through its pointer in hot_thread_locals
/// (`Slot`). The object is made on the thread's first call and deleted
/// when the thread ends. The recorder's per-thread state and the unwinder's
/// caches live there.
template <class T, void* HotThreadLocals::*Slot> class FastThreadLocal {
public:
  /// Two instructions once the thread has its object.
  static T& get() {
    void* const object = hot_thread_locals.*Slot;
    if (__builtin_expect(object != nullptr, 1))
      return *static_cast<T*>(object);
    return make();
  }
  /// The thread's object, or null before its first call and once deleted.
  static T* find() noexcept { return static_cast<T*>(hot_thread_locals.*Slot); }

private:
  /// The thread's first call; or a call while the thread ends, after its
  /// object was deleted: then a new one, which is not deleted.
  __attribute__((noinline)) static T& make() {
    thread_local Owner owner;
    if (owner.object == nullptr)
      owner.object = new T();
    hot_thread_locals.*Slot = owner.object;
    return *owner.object;
  }

  struct Owner {
    T* object = nullptr;
    ~Owner() {
      T* const dying = object;
      object = nullptr;
      hot_thread_locals.*Slot = nullptr;
      delete dying;
    }
  };
};

} // namespace cunumpy::Impl

#endif
