#include "master/api/file_tree.h"

#include <algorithm>
#include <map>
#include <memory>

#include "common/clock.h"

namespace det::master::api {

using nlohmann::json;

namespace {

struct Node {
  std::string path;
  std::string name;
  bool is_dir = false;
  int64_t mtime = 0;
  const std::string* content = nullptr;
  std::map<std::string, std::unique_ptr<Node>> children;
};

Node* Child(Node* parent, const std::string& name, const std::string& path) {
  auto& slot = parent->children[name];
  if (!slot) {
    slot = std::make_unique<Node>();
    slot->name = name;
    slot->path = path;
    slot->is_dir = true;  // until an entry says it is a file
  }
  return slot.get();
}

json ToJson(const Node& n) {
  std::vector<const Node*> kids;
  for (const auto& [name, child] : n.children) kids.push_back(child.get());
  std::stable_sort(kids.begin(), kids.end(),
                   [](const Node* a, const Node* b) { return a->is_dir && !b->is_dir; });
  json files = json::array();
  for (const Node* k : kids) files.push_back(ToJson(*k));
  std::string content = n.content ? *n.content : std::string();
  return json{{"path", n.path},
              {"name", n.name},
              {"modifiedTime", FormatRfc3339(n.mtime * 1000000)},
              {"contentLength", n.is_dir ? 0 : static_cast<int64_t>(content.size())},
              {"isDir", n.is_dir},
              {"contentType", n.is_dir ? "" : DetectContentType(content)},
              {"files", files}};
}

std::string Trimmed(std::string path) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  while (path.starts_with("./")) path = path.substr(2);
  return path;
}

}  // namespace

std::string DetectContentType(const std::string& content) {
  size_t n = std::min<size_t>(content.size(), 512);
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(content[i]);
    // Control bytes other than whitespace mark binary data (as Go's sniffer does).
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b) {
      return "application/octet-stream";
    }
  }
  return "text/plain; charset=utf-8";
}

json FileTreeJson(const std::vector<ArchiveEntry>& entries) {
  Node root;
  root.is_dir = true;
  for (const ArchiveEntry& e : entries) {
    std::string path = Trimmed(e.path);
    if (path.empty()) continue;
    Node* at = &root;
    size_t start = 0;
    while (true) {
      size_t slash = path.find('/', start);
      std::string name =
          path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
      std::string prefix = path.substr(0, slash);
      if (!name.empty()) at = Child(at, name, prefix);
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    at->is_dir = e.is_dir;
    at->mtime = e.mtime;
    at->content = e.is_dir ? nullptr : &e.content;
  }
  return ToJson(root)["files"];
}

Result<std::string> FileContent(const std::vector<ArchiveEntry>& entries, const std::string& path) {
  std::string wanted = Trimmed(path);
  if (wanted.empty() || !IsSafeRelativePath(wanted)) {
    return InvalidArgument("path: must be a relative path without '..' (got '" + path + "')");
  }
  for (const ArchiveEntry& e : entries) {
    if (!e.is_dir && Trimmed(e.path) == wanted) return e.content;
  }
  return NotFound("file '" + wanted + "' not found in the model definition");
}

}  // namespace det::master::api
