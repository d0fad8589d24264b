#pragma once
// Config templates: how a template's config fills in an experiment config, as Determined merges
// them at experiment creation. Pure JSON in, JSON out.
//
// The experiment config wins; the template fills what it leaves out:
// - objects merge key by key (recursively); a null or absent value takes the template's;
// - lists and scalars: the config's value wins whole;
// - except the lists Determined combines: bind_mounts and resources.devices (the template's
//   entries whose container_path the config does not use are appended), environment.proxy_ports
//   (by proxy_port), log_policies (by name, unnamed ones by action and pattern), labels (union)
//   and environment.environment_variables (template entries first, so the config's override);
// - environment.image: a string sets every device type; per-type keys fill in;
// - checkpoint_storage / tensorboard_storage (by `type`) and searcher (by `name`): when both
//   name a different kind, only the shared keys (save_* / metric, smaller_is_better, ...) come
//   from the template; azure credentials come from one side only;
// - hyperparameters: a nested group (an object without `type`) merges, any other
//   hyperparameter of the config replaces the template's whole.

#include <nlohmann/json.hpp>

namespace det::master::config {

nlohmann::json MergeTemplate(const nlohmann::json& config, const nlohmann::json& template_config);

}  // namespace det::master::config
