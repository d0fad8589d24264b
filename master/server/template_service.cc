#include "master/server/template_service.h"

#include <algorithm>
#include <cctype>

#include "master/config/template_merge.h"

namespace det::master::server {

using nlohmann::json;
using store::TemplateRow;

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

Status CheckName(const std::string& name, const char* field) {
  if (name.empty()) return InvalidArgument(std::string(field) + ": required, a template name");
  return Status::Ok();
}

}  // namespace

TemplateService::TemplateService(store::Store* store, std::function<bool(int64_t)> workspace_exists)
    : store_(store), workspace_exists_(std::move(workspace_exists)) {
  if (!workspace_exists_) workspace_exists_ = [](int64_t id) { return id == 1; };
}

Status TemplateService::Check(const TemplateRow& row) const {
  DET_RETURN_IF_ERROR(CheckName(row.name, "name"));
  if (!row.config.is_object()) {
    return InvalidArgument("config: must be an object of experiment-config fields (got " +
                           std::string(row.config.type_name()) + ")");
  }
  if (!workspace_exists_(row.workspace_id)) {
    return NotFound("workspace " + std::to_string(row.workspace_id) + " not found");
  }
  return Status::Ok();
}

Result<std::vector<TemplateRow>> TemplateService::List(const std::string& name,
                                                       const std::vector<int64_t>& workspace_ids,
                                                       bool descending) {
  DET_ASSIGN_OR_RETURN(std::vector<TemplateRow> all, store_->ListTemplates());
  std::vector<TemplateRow> out;
  std::string needle = Lower(name);
  for (auto& t : all) {
    if (!needle.empty() && Lower(t.name).find(needle) == std::string::npos) continue;
    if (!workspace_ids.empty() && std::find(workspace_ids.begin(), workspace_ids.end(),
                                            t.workspace_id) == workspace_ids.end()) {
      continue;
    }
    out.push_back(std::move(t));
  }
  if (descending) std::reverse(out.begin(), out.end());
  return out;
}

Result<TemplateRow> TemplateService::Get(const std::string& name) {
  DET_RETURN_IF_ERROR(CheckName(name, "templateName"));
  return store_->GetTemplate(name);
}

Result<TemplateRow> TemplateService::Create(TemplateRow row) {
  if (row.workspace_id == 0) row.workspace_id = 1;
  DET_RETURN_IF_ERROR(Check(row));
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(store_->InsertTemplate(row));
  return row;
}

Result<TemplateRow> TemplateService::Put(TemplateRow row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(CheckName(row.name, "name"));
  Result<TemplateRow> old = store_->GetTemplate(row.name);
  if (!old.ok() && old.status().code() != StatusCode::kNotFound) return old.status();
  if (row.workspace_id == 0) row.workspace_id = old.ok() ? old->workspace_id : 1;
  DET_RETURN_IF_ERROR(Check(row));
  if (old.ok()) {
    DET_RETURN_IF_ERROR(store_->UpdateTemplate(row));
  } else {
    DET_RETURN_IF_ERROR(store_->InsertTemplate(row));
  }
  return row;
}

Result<TemplateRow> TemplateService::SetConfig(const std::string& name, const json& config) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(CheckName(name, "templateName"));
  DET_ASSIGN_OR_RETURN(TemplateRow row, store_->GetTemplate(name));
  row.config = config;
  DET_RETURN_IF_ERROR(Check(row));
  DET_RETURN_IF_ERROR(store_->UpdateTemplate(row));
  return row;
}

Result<TemplateRow> TemplateService::Rename(const std::string& old_name,
                                            const std::string& new_name) {
  DET_RETURN_IF_ERROR(CheckName(old_name, "oldName"));
  DET_RETURN_IF_ERROR(CheckName(new_name, "newName"));
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(store_->RenameTemplate(old_name, new_name));
  return store_->GetTemplate(new_name);
}

Status TemplateService::Delete(const std::string& name) {
  DET_RETURN_IF_ERROR(CheckName(name, "templateName"));
  std::lock_guard<std::mutex> lock(mu_);
  return store_->DeleteTemplate(name);
}

Result<json> TemplateService::Apply(const std::string& name, const json& config) {
  DET_ASSIGN_OR_RETURN(TemplateRow t, Get(name));
  if (!config.is_object() && !config.is_null()) {
    return InvalidArgument("config: must be a mapping to apply template '" + name + "'");
  }
  return config::MergeTemplate(config.is_null() ? json::object() : config, t.config);
}

}  // namespace det::master::server
