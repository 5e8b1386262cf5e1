// Helpers shared by the host tests: a scratch directory and the built-in registry.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "registry.hpp"

namespace labrun::test {

/// A fresh directory (mkdtemp under the system temp dir), removed with its contents at scope exit.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "labrun") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// Path of `name` inside the directory.
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// The registry of every built-in experiment (host implementations), built once.
inline const Registry& builtin() {
  static const Registry instance = [] {
    Registry r;
    register_builtin(r);
    return r;
  }();
  return instance;
}

}  // namespace labrun::test
