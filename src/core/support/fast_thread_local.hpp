#ifndef CUNUMPY_SRC_FAST_THREAD_LOCAL_HPP
#define CUNUMPY_SRC_FAST_THREAD_LOCAL_HPP

/// The TLS model of the recorder's hot-path variables: initial-exec, since
/// the default model of a shared library calls __tls_get_addr on every
/// access, which costs more than recording a copy.
#define CUNUMPY_FAST_TLS __attribute__((tls_model("initial-exec")))

namespace cunumpy::Impl {

/// One `T` per thread, reached through a CUNUMPY_FAST_TLS pointer. The
/// object is made on the thread's first call and deleted when the thread
/// ends. The recorder's
/// per-thread state and the unwinder's caches live there.
template <class T> class FastThreadLocal {
public:
  /// Two instructions once the thread has its object.
  static T& get() {
    T* const object = pointer_;
    if (__builtin_expect(object != nullptr, 1))
      return *object;
    return make();
  }

private:
  /// The thread's first call; or a call while the thread ends, after its
  /// object was deleted: then a new one, which is not deleted.
  __attribute__((noinline)) static T& make() {
    thread_local Owner owner;
    if (owner.object == nullptr)
      owner.object = new T();
    pointer_ = owner.object;
    return *pointer_;
  }

  struct Owner {
    T* object = nullptr;
    ~Owner() {
      T* const dying = object;
      object = nullptr;
      pointer_ = nullptr;
      delete dying;
    }
  };

  static thread_local T* pointer_ CUNUMPY_FAST_TLS;
};

template <class T>
thread_local T* FastThreadLocal<T>::pointer_ CUNUMPY_FAST_TLS = nullptr;

} // namespace cunumpy::Impl

#endif
