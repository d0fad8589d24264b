#pragma once
// ClonedPtr<T>: an owning pointer that copies its object with T::Clone(), so a class that holds
// a polymorphic part (a searcher's method, a tournament's brackets) stays copyable by default
// (Searcher::Clone).

#include <memory>
#include <utility>

namespace det::master::searcher {

template <typename T>
class ClonedPtr {
 public:
  ClonedPtr() = default;
  ClonedPtr(std::unique_ptr<T> p) : p_(std::move(p)) {}  // NOLINT: implicit, as unique_ptr
  ClonedPtr(const ClonedPtr& o) : p_(o.p_ ? o.p_->Clone() : nullptr) {}
  ClonedPtr(ClonedPtr&&) noexcept = default;
  ClonedPtr& operator=(const ClonedPtr& o) {
    if (this != &o) p_ = o.p_ ? o.p_->Clone() : nullptr;
    return *this;
  }
  ClonedPtr& operator=(ClonedPtr&&) noexcept = default;

  T* operator->() const { return p_.get(); }
  T& operator*() const { return *p_; }
  T* get() const { return p_.get(); }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace det::master::searcher
