#include "common/archive.h"

#include <archive.h>
#include <archive_entry.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace det {
namespace {

struct ArchiveWriteDeleter {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct ArchiveReadDeleter {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
struct EntryDeleter {
  void operator()(struct archive_entry* e) const { archive_entry_free(e); }
};

}  // namespace

bool IsSafeRelativePath(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  std::stringstream ss(path);
  std::string part;
  bool any = false;
  while (std::getline(ss, part, '/')) {
    if (part == "..") return false;
    if (!part.empty() && part != ".") any = true;
  }
  return any;
}

Result<std::string> CreateTarGz(const std::vector<ArchiveEntry>& entries) {
  // Worst case for gzip is slightly larger than the input. The buffer outlives the archive
  // handle, whose destructor may still flush into it.
  size_t total = 1 << 16;
  for (const auto& e : entries) total += e.content.size() + 1024;
  total += total / 10;
  std::string buf(total, '\0');
  size_t used = 0;
  std::unique_ptr<struct archive, ArchiveWriteDeleter> a(archive_write_new());
  archive_write_add_filter_gzip(a.get());
  archive_write_set_format_pax_restricted(a.get());
  if (archive_write_open_memory(a.get(), buf.data(), buf.size(), &used) != ARCHIVE_OK) {
    return Internal(std::string("cannot open archive: ") + archive_error_string(a.get()));
  }
  for (const auto& e : entries) {
    if (!IsSafeRelativePath(e.path)) {
      return InvalidArgument("archive path must be relative without '..': " + e.path);
    }
    std::unique_ptr<struct archive_entry, EntryDeleter> ent(archive_entry_new());
    archive_entry_set_pathname(ent.get(), e.path.c_str());
    archive_entry_set_filetype(ent.get(), e.is_dir ? AE_IFDIR : AE_IFREG);
    archive_entry_set_perm(ent.get(), e.mode & 07777);
    archive_entry_set_size(ent.get(), e.is_dir ? 0 : static_cast<la_int64_t>(e.content.size()));
    archive_entry_set_mtime(ent.get(), e.mtime, 0);
    if (archive_write_header(a.get(), ent.get()) != ARCHIVE_OK) {
      return Internal(std::string("cannot write archive header: ") + archive_error_string(a.get()));
    }
    if (!e.is_dir && !e.content.empty()) {
      if (archive_write_data(a.get(), e.content.data(), e.content.size()) < 0) {
        return Internal(std::string("cannot write archive data: ") + archive_error_string(a.get()));
      }
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return Internal(std::string("cannot close archive: ") + archive_error_string(a.get()));
  }
  a.reset();
  buf.resize(used);
  return buf;
}

Result<std::vector<ArchiveEntry>> ReadArchive(const std::string& data) {
  std::unique_ptr<struct archive, ArchiveReadDeleter> a(archive_read_new());
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), data.data(), data.size()) != ARCHIVE_OK) {
    return InvalidArgument(std::string("cannot read archive: ") + archive_error_string(a.get()));
  }
  std::vector<ArchiveEntry> out;
  struct archive_entry* ent = nullptr;
  int r;
  while ((r = archive_read_next_header(a.get(), &ent)) == ARCHIVE_OK) {
    ArchiveEntry e;
    e.path = archive_entry_pathname(ent);
    e.is_dir = archive_entry_filetype(ent) == AE_IFDIR;
    e.mode = archive_entry_perm(ent);
    e.mtime = archive_entry_mtime(ent);
    if (!e.is_dir) {
      la_int64_t size = archive_entry_size(ent);
      e.content.resize(static_cast<size_t>(size > 0 ? size : 0));
      la_ssize_t n = archive_read_data(a.get(), e.content.data(), e.content.size());
      if (n < 0) return InvalidArgument(std::string("bad archive data: ") + archive_error_string(a.get()));
      e.content.resize(static_cast<size_t>(n));
    }
    out.push_back(std::move(e));
  }
  if (r != ARCHIVE_EOF) {
    return InvalidArgument(std::string("bad archive: ") + archive_error_string(a.get()));
  }
  return out;
}

Status ExtractTarGz(const std::string& data, const std::string& dest_dir) {
  namespace fs = std::filesystem;
  DET_ASSIGN_OR_RETURN(std::vector<ArchiveEntry> entries, ReadArchive(data));
  std::error_code ec;
  fs::create_directories(dest_dir, ec);
  for (const auto& e : entries) {
    std::string path = e.path;
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    if (!IsSafeRelativePath(path)) {
      return InvalidArgument("archive entry would land outside the target directory: " + e.path);
    }
    fs::path target = fs::path(dest_dir) / path;
    if (e.is_dir) {
      fs::create_directories(target, ec);
      if (ec) return Internal("cannot create " + target.string() + ": " + ec.message());
      continue;
    }
    fs::create_directories(target.parent_path(), ec);
    std::ofstream f(target, std::ios::binary | std::ios::trunc);
    if (!f) return Internal("cannot write " + target.string());
    f.write(e.content.data(), static_cast<std::streamsize>(e.content.size()));
    f.close();
    fs::permissions(target, static_cast<fs::perms>(e.mode & 0777), ec);
  }
  return Status::Ok();
}

}  // namespace det
