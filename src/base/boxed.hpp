// Boxed<T>: an optional value kept on the heap, with std::optional's interface and value semantics (copies are
// deep). A record type whose large parts are Boxed costs a pointer per absent part, and a reader that keeps 100,000
// records with some parts dropped (point_record.hpp trim_for_comparison) pays only for the parts it keeps.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace labrun {

/// An optional T on the heap: empty, or one T owned alone. Same interface as the std::optional calls labrun makes
/// (has_value, operator bool, *, ->, value, reset, emplace, assignment from T or std::nullopt); copying copies the
/// T. sizeof is one pointer. @throws std::bad_optional_access from value() when empty.
template <class T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(std::nullopt_t) {}                                 // NOLINT(google-explicit-constructor)
  Boxed(const T& v) : p_(std::make_unique<T>(v)) {}        // NOLINT(google-explicit-constructor)
  Boxed(T&& v) : p_(std::make_unique<T>(std::move(v))) {}  // NOLINT(google-explicit-constructor)
  Boxed(const std::optional<T>& v) : p_(v ? std::make_unique<T>(*v) : nullptr) {}  // NOLINT
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(std::nullopt_t) {
    p_.reset();
    return *this;
  }
  Boxed& operator=(const T& v) {
    p_ = std::make_unique<T>(v);
    return *this;
  }
  Boxed& operator=(T&& v) {
    p_ = std::make_unique<T>(std::move(v));
    return *this;
  }
  ~Boxed() = default;

  bool has_value() const noexcept { return p_ != nullptr; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  T& value() {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  const T& value() const {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  void reset() noexcept { p_.reset(); }
  /// Destroys the held T (freeing it) and holds a new one made from `args`.
  template <class... A>
  T& emplace(A&&... args) {
    p_ = std::make_unique<T>(std::forward<A>(args)...);
    return *p_;
  }
  friend bool operator==(const Boxed& b, std::nullopt_t) noexcept { return !b.p_; }
  friend bool operator!=(const Boxed& b, std::nullopt_t) noexcept { return b.p_ != nullptr; }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace labrun
