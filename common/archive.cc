#include "common/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

namespace {

const char* SpecialTypeName(mode_t type) {
  switch (type) {
    case AE_IFLNK:
      return "a symbolic link";
    case AE_IFCHR:
      return "a character device";
    case AE_IFBLK:
      return "a block device";
    case AE_IFIFO:
      return "a fifo";
    case AE_IFSOCK:
      return "a socket";
    default:
      return "not a regular file or directory";
  }
}

// Opens an archive held in memory for reading (tar, optionally compressed).
Result<std::unique_ptr<struct archive, ArchiveReadDeleter>> OpenForRead(const std::string& data) {
  std::unique_ptr<struct archive, ArchiveReadDeleter> a(archive_read_new());
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), data.data(), data.size()) != ARCHIVE_OK) {
    return InvalidArgument(std::string("cannot read archive: ") + archive_error_string(a.get()));
  }
  return a;
}

// The rules every entry read from an archive must follow; on success *path is its relative path
// (without a trailing '/') and *size what it declares. `total` sums the sizes so far.
Status CheckEntry(struct archive_entry* ent, uint64_t index, const ArchiveLimits& limits,
                  uint64_t* total, std::string* path, uint64_t* size) {
  const char* name = archive_entry_pathname(ent);
  if (name == nullptr || *name == '\0') {
    return InvalidArgument("archive entry #" + std::to_string(index) + " has no path");
  }
  std::string quoted = std::string("archive entry '") + name + "'";
  if (index >= limits.max_entries) {
    return InvalidArgument(quoted + ": the archive has more than " +
                           std::to_string(limits.max_entries) + " entries, the limit");
  }
  *path = name;
  while (path->size() > 1 && path->back() == '/') path->pop_back();
  if ((*path)[0] == '/') {
    return InvalidArgument(quoted +
                           ": absolute paths are not allowed (it would land outside the target "
                           "directory)");
  }
  if (!IsSafeRelativePath(*path)) {
    return InvalidArgument(quoted +
                           ": '..' components are not allowed (it would land outside the target "
                           "directory)");
  }
  if (const char* target = archive_entry_hardlink(ent); target != nullptr) {
    return InvalidArgument(quoted + " is a hard link (to '" + target +
                           "'): only regular files and directories are allowed");
  }
  mode_t type = archive_entry_filetype(ent);
  if (type != AE_IFREG && type != AE_IFDIR) {
    std::string what = SpecialTypeName(type);
    if (type == AE_IFLNK) {
      const char* target = archive_entry_symlink(ent);
      what += std::string(" (to '") + (target ? target : "") + "')";
    }
    return InvalidArgument(quoted + " is " + what +
                           ": only regular files and directories are allowed");
  }
  la_int64_t declared = type == AE_IFDIR ? 0 : archive_entry_size(ent);
  if (declared < 0) return InvalidArgument(quoted + ": negative size");
  *size = static_cast<uint64_t>(declared);
  if (*size > limits.max_total_bytes || *total + *size > limits.max_total_bytes) {
    return InvalidArgument(quoted + " declares " + std::to_string(*size) +
                           " bytes: the archive would expand past its limit of " +
                           std::to_string(limits.max_total_bytes) + " bytes");
  }
  *total += *size;
  return Status::Ok();
}

// Refuses a path under `dest` whose existing components include a symbolic link (writing
// through it could land outside `dest`).
Status CheckNoSymlinkBelow(const std::filesystem::path& dest, const std::string& rel,
                           const std::string& entry_name) {
  namespace fs = std::filesystem;
  fs::path cur = dest;
  for (const fs::path& part : fs::path(rel)) {
    if (part == ".") continue;
    cur /= part;
    std::error_code ec;
    fs::file_status st = fs::symlink_status(cur, ec);
    if (ec || !fs::exists(st)) return Status::Ok();  // nothing further exists yet
    if (fs::is_symlink(st)) {
      return InvalidArgument("archive entry '" + entry_name + "': " + cur.string() +
                             " is a symbolic link; refusing to write through it");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<ArchiveEntry>> ReadArchive(const std::string& data,
                                              const ArchiveLimits& limits) {
  DET_ASSIGN_OR_RETURN(auto a, OpenForRead(data));
  std::vector<ArchiveEntry> out;
  struct archive_entry* ent = nullptr;
  uint64_t total = 0;
  int r;
  while ((r = archive_read_next_header(a.get(), &ent)) == ARCHIVE_OK) {
    ArchiveEntry e;
    uint64_t size = 0;
    DET_RETURN_IF_ERROR(CheckEntry(ent, out.size(), limits, &total, &e.path, &size));
    e.is_dir = archive_entry_filetype(ent) == AE_IFDIR;
    e.mode = archive_entry_perm(ent);
    e.mtime = archive_entry_mtime(ent);
    // Read in chunks: memory follows the data actually there, not the size declared.
    char buf[1 << 16];
    while (!e.is_dir) {
      la_ssize_t n = archive_read_data(a.get(), buf, sizeof(buf));
      if (n == 0) break;
      if (n < 0) {
        return InvalidArgument("archive entry '" + e.path +
                               "': bad data: " + archive_error_string(a.get()));
      }
      e.content.append(buf, static_cast<size_t>(n));
      if (e.content.size() > size) {
        return InvalidArgument("archive entry '" + e.path + "' holds more than it declares");
      }
    }
    out.push_back(std::move(e));
  }
  if (r != ARCHIVE_EOF) {
    return InvalidArgument(std::string("bad archive: ") + archive_error_string(a.get()));
  }
  return out;
}

Status ExtractTarGz(const std::string& data, const std::string& dest_dir,
                    const ArchiveLimits& limits) {
  namespace fs = std::filesystem;
  DET_ASSIGN_OR_RETURN(auto a, OpenForRead(data));
  std::error_code ec;
  fs::create_directories(dest_dir, ec);
  if (ec) return Internal("cannot create " + dest_dir + ": " + ec.message());
  struct archive_entry* ent = nullptr;
  uint64_t total = 0;
  uint64_t index = 0;
  std::string buf(1 << 16, '\0');
  int r;
  while ((r = archive_read_next_header(a.get(), &ent)) == ARCHIVE_OK) {
    std::string path;
    uint64_t size = 0;
    DET_RETURN_IF_ERROR(CheckEntry(ent, index++, limits, &total, &path, &size));
    DET_RETURN_IF_ERROR(CheckNoSymlinkBelow(dest_dir, path, path));
    fs::path target = fs::path(dest_dir) / path;
    mode_t perm = archive_entry_perm(ent) & 0777;  // never setuid/setgid/sticky
    if (archive_entry_filetype(ent) == AE_IFDIR) {
      fs::create_directories(target, ec);
      if (ec) return Internal("cannot create " + target.string() + ": " + ec.message());
      continue;
    }
    fs::create_directories(target.parent_path(), ec);
    if (ec) return Internal("cannot create " + target.parent_path().string() + ": " + ec.message());
    int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return Internal("cannot write " + target.string() + ": " + std::strerror(errno));
    uint64_t written = 0;
    Status st = Status::Ok();
    while (st.ok()) {
      la_ssize_t n = archive_read_data(a.get(), buf.data(), buf.size());
      if (n == 0) break;
      if (n < 0) {
        st = InvalidArgument("archive entry '" + path +
                             "': bad data: " + archive_error_string(a.get()));
        break;
      }
      written += static_cast<uint64_t>(n);
      if (written > size) {  // libarchive stops at the declared size; be sure of it
        st = InvalidArgument("archive entry '" + path + "' holds more than it declares");
        break;
      }
      for (la_ssize_t off = 0; off < n;) {
        ssize_t w = ::write(fd, buf.data() + off, static_cast<size_t>(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          st = Internal("cannot write " + target.string() + ": " + std::strerror(errno));
          break;
        }
        off += w;
      }
    }
    ::fchmod(fd, perm);
    ::close(fd);
    DET_RETURN_IF_ERROR(st);
  }
  if (r != ARCHIVE_EOF) {
    return InvalidArgument(std::string("bad archive: ") + archive_error_string(a.get()));
  }
  return Status::Ok();
}

}  // namespace det
