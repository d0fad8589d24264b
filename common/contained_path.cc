#include "common/contained_path.h"

#include <string>
#include <system_error>

namespace det {

namespace fs = std::filesystem;

bool LexicallyInside(const fs::path& root, const fs::path& path) {
  fs::path r = root.lexically_normal();
  fs::path p = path.lexically_normal();
  // "a/b/" normalizes to "a/b/" (an empty last component): compare without it.
  if (!r.has_filename() && r.has_parent_path() && r != r.root_path()) r = r.parent_path();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  auto ri = r.begin(), pi = p.begin();
  for (; ri != r.end(); ++ri, ++pi) {
    if (ri->empty()) continue;
    if (pi == p.end() || *ri != *pi) return false;
  }
  return true;
}

Result<fs::path> ResolveInside(const fs::path& root, const fs::path& path, std::string_view what) {
  std::error_code ec;
  fs::path real_root = fs::weakly_canonical(root, ec);
  if (ec) {
    return InvalidArgument(std::string(what) + ": cannot resolve root " + root.string() + ": " +
                           ec.message());
  }
  fs::path joined = path.is_absolute() ? path : root / path;
  fs::path real = fs::weakly_canonical(joined, ec);
  if (ec) {
    return InvalidArgument(std::string(what) + ": cannot resolve " + joined.string() + ": " +
                           ec.message());
  }
  if (!LexicallyInside(real_root, real)) {
    return InvalidArgument(std::string(what) + ": " + path.string() + " resolves to " +
                           real.string() + ", outside " + root.string());
  }
  return real;
}

}  // namespace det
