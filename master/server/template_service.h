#pragma once
// TemplateService: config templates (det template ..., /api/v1/templates). A template is a named
// experiment-config fragment; an experiment created with `template: NAME` gets it merged in
// (config::MergeTemplate). Names are unique cluster-wide; each template sits in a workspace.

#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/store/store.h"

namespace det::master::server {

class TemplateService {
 public:
  // `workspace_exists` says whether a workspace id may hold templates; by default only the
  // built-in workspace 1.
  explicit TemplateService(store::Store* store,
                           std::function<bool(int64_t)> workspace_exists = nullptr);

  // Templates whose name contains `name` (case-insensitive; "" = all), in the given workspaces
  // (empty = all), ordered by name (descending when `descending`).
  Result<std::vector<store::TemplateRow>> List(const std::string& name,
                                               const std::vector<int64_t>& workspace_ids,
                                               bool descending);
  Result<store::TemplateRow> Get(const std::string& name);
  // Creates a template; workspace 0 means the default workspace 1. AlreadyExists when taken.
  Result<store::TemplateRow> Create(store::TemplateRow row);
  // Creates or replaces; on replace a workspace of 0 keeps the template's workspace.
  Result<store::TemplateRow> Put(store::TemplateRow row);
  Result<store::TemplateRow> SetConfig(const std::string& name, const nlohmann::json& config);
  Result<store::TemplateRow> Rename(const std::string& old_name, const std::string& new_name);
  Status Delete(const std::string& name);
  // The experiment config (JSON of the submitted YAML) with template `name` merged in.
  Result<nlohmann::json> Apply(const std::string& name, const nlohmann::json& config);

 private:
  Status Check(const store::TemplateRow& row) const;

  store::Store* store_;
  std::function<bool(int64_t)> workspace_exists_;
  std::mutex mu_;  // makes Put's read-then-write atomic
};

}  // namespace det::master::server
