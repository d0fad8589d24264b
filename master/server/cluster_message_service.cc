#include "master/server/cluster_message_service.h"

#include "master/core/cluster_message.h"

namespace det::master::server {

Status ClusterMessageService::Load() {
  DET_ASSIGN_OR_RETURN(std::optional<store::ClusterMessageRow> m, store_->GetClusterMessage());
  MutexLock lock(&mu_);
  message_ = std::move(m);
  return Status::Ok();
}

std::optional<store::ClusterMessageRow> ClusterMessageService::Active() const {
  MutexLock lock(&mu_);
  if (message_ && core::ClusterMessageActive(*message_, clock_->NowMicros())) return message_;
  return std::nullopt;
}

std::optional<store::ClusterMessageRow> ClusterMessageService::Current() const {
  MutexLock lock(&mu_);
  if (message_ && core::ClusterMessageCurrent(*message_, clock_->NowMicros())) return message_;
  return std::nullopt;
}

Status ClusterMessageService::Set(const nlohmann::json& body) {
  DET_ASSIGN_OR_RETURN(store::ClusterMessageRow m,
                       core::ParseClusterMessage(body, clock_->NowMicros()));
  MutexLock lock(&mu_);
  DET_RETURN_IF_ERROR(store_->SetClusterMessage(m));
  message_ = std::move(m);
  return Status::Ok();
}

Status ClusterMessageService::Clear() {
  MutexLock lock(&mu_);
  DET_RETURN_IF_ERROR(store_->ClearClusterMessage());
  message_.reset();
  return Status::Ok();
}

}  // namespace det::master::server
