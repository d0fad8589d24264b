#pragma once
// Paths built from a request (a checkpoint's directory under its storage, a storage path under
// the roots the admin allows) must stay inside their root. Both are resolved first, symbolic
// links of the parts that exist included, so neither "..", an absolute path nor a link planted
// under the root reaches outside it; the comparison is by whole path components ("/data2" is
// not inside "/data").

#include <filesystem>
#include <string_view>

#include "common/status.h"

namespace det {

// Whether `path` is `root` or below it, by components, after lexical normalization only (no
// file system access; both should be absolute).
bool LexicallyInside(const std::filesystem::path& root, const std::filesystem::path& path);

// `path` (absolute, or relative to `root`) resolved with std::filesystem::weakly_canonical,
// when it is `root` (resolved the same way) or inside it; else InvalidArgument naming `what`,
// the path and the root.
Result<std::filesystem::path> ResolveInside(const std::filesystem::path& root,
                                            const std::filesystem::path& path,
                                            std::string_view what);

}  // namespace det
