// det resource-pool (rp) bindings add | remove | replace | list-workspaces: which workspaces
// may use a resource pool (/api/v1/resource-pools/{name}/workspace-bindings), with the output
// of Determined's CLI.
#include <memory>
#include <set>
#include <vector>

#include "cli/cli_context.h"
#include "cli/table.h"
#include "common/http_client.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

struct BindingArgs {
  std::string pool;
  std::vector<std::string> workspaces;
};

// Python's repr of a list of strings, as Determined's messages print it: ['a', 'b'].
std::string PythonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += "'" + items[i] + "'";
  }
  return out + "]";
}

std::string BindingsPath(const std::string& pool) {
  return "/api/v1/resource-pools/" + UrlEncode(pool) + "/workspace-bindings";
}

void AddChange(CLI::App* bindings, CliContext& ctx, const char* name, const char* method,
               const char* help, const char* done) {
  auto args = std::make_shared<BindingArgs>();
  CLI::App* cmd = bindings->add_subcommand(name, help);
  cmd->add_option("POOL_NAME", args->pool, "name of the resource pool")->required();
  cmd->add_option("WORKSPACE_NAMES", args->workspaces, "the workspaces")->required();
  cmd->callback([&ctx, args, method, done] {
    ctx.SetAction(std::string("resource pool bindings ") + method, [&ctx, args, method,
                                                                     done]() -> Status {
      json body = {{"resourcePoolName", args->pool}, {"workspaceNames", args->workspaces}};
      DET_RETURN_IF_ERROR(ctx.GetSession().Call(method, BindingsPath(args->pool), body).status());
      Print(std::string(done) + " \"" + args->pool +
            "\" and the following workspaces: " + PythonList(args->workspaces) + "\n");
      return Status::Ok();
    });
  });
}

}  // namespace

void RegisterResourcePoolCommands(CLI::App& app, CliContext& ctx) {
  CLI::App* rp = app.add_subcommand("resource-pool", "manage resource pools")->alias("rp");
  rp->require_subcommand(1);
  CLI::App* bindings = rp->add_subcommand("bindings", "manage resource pool bindings");
  bindings->require_subcommand(1);
  AddChange(bindings, ctx, "add", "POST", "add a resource-pool-to-workspace binding",
            "added bindings between the resource pool");
  AddChange(bindings, ctx, "remove", "DELETE", "remove a resource-pool-to-workspace binding",
            "removed bindings between the resource pool");
  AddChange(bindings, ctx, "replace", "PUT",
            "replace all existing resource-pool-to-workspace bindings",
            "replaced bindings of the resource pool");

  auto pool = std::make_shared<std::string>();
  CLI::App* list = bindings->add_subcommand("list-workspaces", "list all workspaces bound to the pool");
  list->add_option("POOL_NAME", *pool, "name of the resource pool")->required();
  list->callback([&ctx, pool] {
    ctx.SetAction("list pool bindings", [&ctx, pool]() -> Status {
      Session& s = ctx.GetSession();
      DET_ASSIGN_OR_RETURN(json resp, s.Get(BindingsPath(*pool)));
      std::set<int64_t> ids;
      for (const json& id : resp.value("workspaceIds", json::array())) {
        if (id.is_number_integer()) ids.insert(id.get<int64_t>());
      }
      std::string names;
      if (!ids.empty()) {
        DET_ASSIGN_OR_RETURN(json all, s.Get("/api/v1/workspaces"));
        for (const json& w : all.value("workspaces", json::array())) {
          if (!ids.count(w.value("id", int64_t{0}))) continue;
          names += (names.empty() ? "" : ", ") + w.value("name", "");
        }
      }
      Print(RenderPresto({"resource pool", "workspaces"}, {{*pool, names}}) + "\n");
      return Status::Ok();
    });
  });
}

}  // namespace det::cli
