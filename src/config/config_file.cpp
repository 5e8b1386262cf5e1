// Reading a config file (load_config): a regular file only, read with a bound, then parsed (config.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "config.hpp"
#include "output_file.hpp"  // describe_file_type

namespace labrun {

SweepConfig load_config(const std::string& path, const Registry& registry) {
  // A regular file only: a FIFO would block the open and the read (validate waited forever), a device never end.
  // O_NONBLOCK so that opening a FIFO returns at once; it changes nothing for a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw ConfigError({path, 0, 0}, "", std::string("cannot read the config: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    throw ConfigError({path, 0, 0}, "", std::string("cannot read the config: ") + std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw ConfigError({path, 0, 0}, "",
                      "the config is " + describe_file_type(st.st_mode) +
                          ", not a regular file; labrun reads a config from a regular file (YAML, "
                          "docs/config.md)");
  }
  // stdio rather than iostreams: errno after fread is the reliable way to report why a read failed.
  std::FILE* file = ::fdopen(fd, "rb");
  if (!file) {
    const int error = errno;
    ::close(fd);
    throw ConfigError({path, 0, 0}, "", std::string("cannot read the config: ") + std::strerror(error));
  }
  std::string text;
  char buffer[65536];
  std::size_t got = 0;
  // A bounded read: one byte past the limit is enough to refuse a file (or /dev/zero) without reading it all.
  while (text.size() <= kMaxConfigBytes && (got = std::fread(buffer, 1, sizeof buffer, file)) > 0)
    text.append(buffer, got);
  const bool failed = std::ferror(file) != 0;
  const int error = errno;
  std::fclose(file);
  if (failed) throw ConfigError({path, 0, 0}, "", std::string("cannot read the config: ") + std::strerror(error));
  return parse_config(text, path, registry);
}

}  // namespace labrun
