#pragma once
// Clang thread-safety annotations (-Wthread-safety) and a mutex that carries them. Under other
// compilers the macros expand to nothing. `make thread-safety` checks the master's services.

#include <mutex>

#if defined(__clang__)
#define DET_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define DET_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) DET_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY DET_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) DET_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) DET_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) DET_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) DET_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) DET_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) DET_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RETURN_CAPABILITY(x) DET_THREAD_ANNOTATION(lock_returned(x))
#define ASSERT_CAPABILITY(x) DET_THREAD_ANNOTATION(assert_capability(x))
#define NO_THREAD_SAFETY_ANALYSIS DET_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace det {

// std::mutex with the annotations, so members can be GUARDED_BY it.
class CAPABILITY("mutex") Mutex {
 public:
  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // BasicLockable, for std::condition_variable_any::wait (which the analysis cannot follow).
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

// Holds a Mutex for its scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_->Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Lets go for a call that takes the lock itself, and takes it back.
  void Unlock() RELEASE() {
    mu_->Unlock();
    held_ = false;
  }
  void Lock() ACQUIRE() {
    mu_->Lock();
    held_ = true;
  }

 private:
  Mutex* mu_;
  bool held_ = true;
};

}  // namespace det
