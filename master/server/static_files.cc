#include "master/server/static_files.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace det::master::server {

namespace fs = std::filesystem;

std::optional<std::string> SafeJoin(const std::string& root, const std::string& relative) {
  if (relative.find('\0') != std::string::npos || relative.find('\\') != std::string::npos ||
      relative.find('%') != std::string::npos) {
    return std::nullopt;
  }
  std::string out = root;
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  std::stringstream ss(relative);
  std::string seg;
  while (std::getline(ss, seg, '/')) {
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") return std::nullopt;
    out += "/" + seg;
  }
  return out;
}

std::string ContentTypeFor(const std::string& file_name) {
  static const std::map<std::string, std::string> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},
      {".ico", "image/x-icon"},
      {".webp", "image/webp"},
      {".woff", "font/woff"},
      {".woff2", "font/woff2"},
      {".ttf", "font/ttf"},
      {".txt", "text/plain; charset=utf-8"},
      {".wasm", "application/wasm"},
  };
  std::string ext = fs::path(file_name).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto it = kTypes.find(ext);
  return it == kTypes.end() ? "application/octet-stream" : it->second;
}

std::string CacheControlFor(const std::string& relative) {
  std::string r = relative;
  while (!r.empty() && r.front() == '/') r.erase(r.begin());
  if (r.rfind("assets/", 0) == 0) return "public, max-age=31536000, immutable";
  return "no-cache";
}

std::string WebUiDirNearExecutable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  fs::path base = exe.parent_path().parent_path();
  for (const fs::path& dir : {base / "webui", base / "share" / "determined" / "webui"}) {
    if (fs::is_regular_file(dir / "index.html", ec)) {
      fs::path canonical = fs::canonical(dir, ec);
      return ec ? dir.string() : canonical.string();
    }
  }
  return "";
}

namespace {

std::optional<std::string> ReadRegularFile(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

HttpResponse NotFoundResponse(const std::string& message) {
  HttpResponse r;
  r.status = 404;
  r.body = ErrorJson(5, "NotFound", message);
  return r;
}

}  // namespace

HttpResponse ServeWebUiFile(const std::string& root, const std::string& relative) {
  if (root.empty()) {
    return NotFoundResponse(
        "the web UI is not built: run `make build` (or set webui_dir in master.yaml / "
        "--webui-dir)");
  }
  std::optional<std::string> path = SafeJoin(root, relative);
  if (!path) return NotFoundResponse("invalid web UI path: " + relative);
  std::string served = relative;
  std::optional<std::string> body = ReadRegularFile(*path);
  if (!body) {
    std::string r = relative;
    while (!r.empty() && r.front() == '/') r.erase(r.begin());
    if (r.rfind("assets/", 0) == 0) return NotFoundResponse("no such web UI file: " + relative);
    served = "index.html";
    body = ReadRegularFile(root + "/index.html");
    if (!body) {
      return NotFoundResponse("the web UI directory " + root + " has no index.html");
    }
  }
  HttpResponse r;
  r.content_type = ContentTypeFor(served);
  r.body = std::move(*body);
  r.headers.emplace_back("Cache-Control", CacheControlFor(served));
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return r;
}

}  // namespace det::master::server
