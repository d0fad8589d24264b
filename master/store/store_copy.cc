#include "master/store/store_copy.h"

#include <set>
#include <vector>

#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

struct Column {
  std::string name;
  std::string type;  // PostgreSQL's data_type
};

Result<std::vector<std::string>> Tables(Db* to) {
  Statement s(to,
              "SELECT table_name FROM information_schema.tables WHERE table_schema = "
              "current_schema() AND table_type = 'BASE TABLE' AND table_name <> "
              "'schema_migrations' ORDER BY table_name");
  DET_RETURN_IF_ERROR(s.prepared());
  return s.Collect<std::string>([](const Statement& st) { return st.Text(0); });
}

Result<std::vector<Column>> Columns(Db* to, const std::string& table) {
  Statement s(to,
              "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema "
              "= current_schema() AND table_name = ? ORDER BY ordinal_position");
  DET_RETURN_IF_ERROR(s.prepared());
  s.Bind(1, table);
  return s.Collect<Column>([](const Statement& st) { return Column{st.Text(0), st.Text(1)}; });
}

// Tables ordered so that each comes after the tables its foreign keys point at.
Result<std::vector<std::string>> InDependencyOrder(Db* to, std::vector<std::string> tables) {
  Statement s(to,
              "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint "
              "WHERE contype = 'f' AND connamespace = current_schema()::regnamespace");
  DET_RETURN_IF_ERROR(s.prepared());
  std::multimap<std::string, std::string> needs;  // table -> table it references
  while (true) {
    DET_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    if (s.Text(0) != s.Text(1)) needs.emplace(s.Text(0), s.Text(1));
  }
  std::vector<std::string> out;
  std::set<std::string> placed;
  while (out.size() < tables.size()) {
    bool progress = false;
    for (const std::string& t : tables) {
      if (placed.count(t)) continue;
      bool ready = true;
      auto [lo, hi] = needs.equal_range(t);
      for (auto it = lo; it != hi; ++it) ready = ready && placed.count(it->second) > 0;
      if (!ready) continue;
      out.push_back(t);
      placed.insert(t);
      progress = true;
    }
    if (!progress) return Internal("migrate-store: foreign keys form a cycle");
  }
  return out;
}

Result<int64_t> Count(Db* db, const std::string& table) {
  Statement s(db, "SELECT COUNT(*) FROM " + table);
  DET_RETURN_IF_ERROR(s.prepared());
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

Status CopyTable(Db* from, Db* to, const std::string& table, const std::vector<Column>& cols,
                 int64_t* copied) {
  std::string names, marks;
  for (size_t i = 0; i < cols.size(); ++i) {
    names += (i ? ", " : "") + cols[i].name;
    marks += i ? ", ?" : "?";
  }
  Statement read(from, "SELECT " + names + " FROM " + table);
  DET_RETURN_IF_ERROR(read.prepared());
  Statement write(to, "INSERT INTO " + table + " (" + names + ") VALUES (" + marks + ")");
  DET_RETURN_IF_ERROR(write.prepared());
  while (true) {
    DET_ASSIGN_OR_RETURN(bool row, read.Step());
    if (!row) break;
    write.Reset();
    for (size_t i = 0; i < cols.size(); ++i) {
      const int c = static_cast<int>(i);
      if (read.IsNull(c)) continue;  // unbound: NULL
      const std::string& type = cols[i].type;
      if (type == "bigint" || type == "integer" || type == "smallint") {
        write.Bind(c + 1, read.Int(c));
      } else if (type == "double precision" || type == "real" || type == "numeric") {
        write.Bind(c + 1, read.Double(c));
      } else if (type == "bytea") {
        write.BindBlob(c + 1, read.Text(c));
      } else {
        write.Bind(c + 1, read.Text(c));
      }
    }
    Status st = write.Run();
    if (!st.ok()) return Internal("migrate-store: table " + table + ": " + st.message());
    ++*copied;
  }
  return Status::Ok();
}

}  // namespace

Result<CopyReport> CopyStoreTables(Db* from, Db* to) {
  if (to->dialect() != Dialect::kPostgres) {
    return InvalidArgument("migrate-store: --to must be a PostgreSQL database");
  }
  for (const char* table : {"users", "experiments"}) {
    DET_ASSIGN_OR_RETURN(int64_t n, Count(to, table));
    if (n > 0) {
      return FailedPrecondition(std::string("migrate-store: the target already holds ") + table +
                                " (" + std::to_string(n) +
                                " rows); copy into a new, empty database");
    }
  }
  DET_ASSIGN_OR_RETURN(std::vector<std::string> tables, Tables(to));
  DET_ASSIGN_OR_RETURN(tables, InDependencyOrder(to, std::move(tables)));
  CopyReport report;
  DET_RETURN_IF_ERROR(to->Exec("BEGIN"));
  Status st = [&]() -> Status {
    for (auto it = tables.rbegin(); it != tables.rend(); ++it) {
      DET_RETURN_IF_ERROR(to->Exec("DELETE FROM " + *it));
    }
    for (const std::string& t : tables) {
      DET_ASSIGN_OR_RETURN(std::vector<Column> cols, Columns(to, t));
      int64_t copied = 0;
      DET_RETURN_IF_ERROR(CopyTable(from, to, t, cols, &copied));
      report.rows[t] = copied;
    }
    return to->SyncIdSequences();
  }();
  if (!st.ok()) {
    (void)to->Exec("ROLLBACK");
    return st;
  }
  DET_RETURN_IF_ERROR(to->Exec("COMMIT"));
  return report;
}

}  // namespace det::master::store
