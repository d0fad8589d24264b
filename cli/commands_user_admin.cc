// det user list / describe / create / activate / deactivate / rename / change-password / edit
// (POST /api/v1/users, PATCH /api/v1/users/{id}), with Determined's output.
#include <cctype>
#include <memory>

#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/password.h"
#include "cli/table.h"
#include "common/http_client.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

Result<json> UserByName(Session& session, const std::string& name) {
  DET_ASSIGN_OR_RETURN(json resp, session.Get("/api/v1/users/" + UrlEncode(name) + "/by-username"));
  return resp.value("user", json::object());
}

Status PatchUser(Session& session, const std::string& name, const json& patch) {
  DET_ASSIGN_OR_RETURN(json user, UserByName(session, name));
  return session
      .Call("PATCH", "/api/v1/users/" + std::to_string(user.value("id", int64_t{0})), patch)
      .status();
}

// Asks for a new password twice.
Result<std::string> AskNewPassword(const std::string& prompt) {
  std::string password = ReadPassword(prompt);
  std::string again = ReadPassword("Confirm password: ");
  if (password != again) return InvalidArgument("Passwords do not match");
  return password;
}

// A cell as Determined's render_objects shows it: a missing value is "N/A".
TableCell OrNa(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return std::string("N/A");
  return JsonCell(obj[key]);
}

// Determined's string_to_bool: true/false, yes/no, 1/0, any case.
bool IsTrue(std::string v) {
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v == "true" || v == "yes" || v == "y" || v == "1" || v == "t";
}

const CLI::Validator kTrueFalse(
    [](std::string& v) -> std::string {
      std::string l = v;
      for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      for (const char* ok : {"true", "false", "yes", "no", "y", "n", "1", "0", "t", "f"}) {
        if (l == ok) return "";
      }
      return "must be true or false, not '" + v + "'";
    },
    "(true|false)");

}  // namespace

void RegisterUserAdminCommands(CLI::App* user, CliContext& ctx) {
  auto all = std::make_shared<bool>(false);
  CLI::App* list = user->add_subcommand("list", "list users")->alias("ls");
  list->add_flag("--all,-a", *all, "list inactive users too");
  list->callback([&ctx, all] {
    ctx.SetAction("list users", [&ctx, all]() -> Status {
      DET_ASSIGN_OR_RETURN(
          json resp, ctx.GetSession().Get(*all ? "/api/v1/users" : "/api/v1/users?active=true"));
      std::vector<TableRow> rows;
      for (const json& u : resp.value("users", json::array())) {
        json group = u.value("agentUserGroup", json::object());
        rows.push_back({OrNa(u, "id"), OrNa(u, "username"), OrNa(u, "displayName"),
                        OrNa(u, "admin"), OrNa(u, "active"), OrNa(u, "remote"),
                        OrNa(group, "agentUid"), OrNa(group, "agentGid"), OrNa(group, "agentUser"),
                        OrNa(group, "agentGroup")});
      }
      Print(RenderPresto({"User Id", "Username", "Display Name", "Admin", "Active", "Remote",
                          "Agent Uid", "Agent Gid", "Agent User", "Agent Group"},
                         rows) +
            "\n");
      return Status::Ok();
    });
  });

  // One user, with the columns of `det user list` (--json: the API's user object).
  auto described = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  CLI::App* describe = user->add_subcommand("describe", "describe one user");
  describe->add_option("USERNAME", *described, "name of the user")->required();
  describe->add_flag("--json", *as_json, "print the user as JSON");
  describe->callback([&ctx, described, as_json] {
    ctx.SetAction("describe user", [&ctx, described, as_json]() -> Status {
      DET_ASSIGN_OR_RETURN(json u, UserByName(ctx.GetSession(), *described));
      if (*as_json) {
        Print(u.dump(2) + "\n");
        return Status::Ok();
      }
      json group = u.value("agentUserGroup", json::object());
      Print(RenderPresto(
                {"User Id", "Username", "Display Name", "Admin", "Active", "Remote", "Agent Uid",
                 "Agent Gid", "Agent User", "Agent Group"},
                {{OrNa(u, "id"), OrNa(u, "username"), OrNa(u, "displayName"), OrNa(u, "admin"),
                  OrNa(u, "active"), OrNa(u, "remote"), OrNa(group, "agentUid"),
                  OrNa(group, "agentGid"), OrNa(group, "agentUser"), OrNa(group, "agentGroup")}}) +
            "\n");
      return Status::Ok();
    });
  });

  struct CreateArgs {
    std::string username;
    bool admin = false;
    std::string password;
    bool remote = false;
  };
  auto ca = std::make_shared<CreateArgs>();
  CLI::App* create = user->add_subcommand("create", "create user");
  create->add_option("USERNAME", ca->username, "name of new user")->required();
  create->add_flag("--admin", ca->admin, "give new user admin rights");
  CLI::Option* password_opt =
      create->add_option("--password", ca->password, "password of new user");
  create->add_flag("--remote", ca->remote, "accepted for compatibility; remote users are refused");
  create->callback([&ctx, ca, password_opt] {
    ctx.SetAction("create user", [&ctx, ca, password_opt]() -> Status {
      std::string password;
      if (password_opt->count() > 0) {
        password = ca->password;
      } else if (!ca->remote) {
        DET_ASSIGN_OR_RETURN(password,
                             AskNewPassword("Password for user '" + ca->username + "': "));
      }
      json body = {{"user",
                    {{"username", ca->username},
                     {"admin", ca->admin},
                     {"active", true},
                     {"remote", ca->remote}}},
                   {"password", HashPasswordForLogin(password)},
                   {"isHashed", true}};
      return ctx.GetSession().Post("/api/v1/users", body).status();
    });
  });

  for (bool activate : {true, false}) {
    auto name = std::make_shared<std::string>();
    CLI::App* cmd = user->add_subcommand(activate ? "activate" : "deactivate",
                                         activate ? "activate user" : "deactivate user");
    cmd->add_option("USERNAME", *name,
                    activate ? "name of user to activate" : "name of user to deactivate")
        ->required();
    cmd->callback([&ctx, name, activate] {
      ctx.SetAction(activate ? "activate user" : "deactivate user", [&ctx, name, activate] {
        return PatchUser(ctx.GetSession(), *name, {{"active", activate}});
      });
    });
  }

  auto rn = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* rename = user->add_subcommand("rename", "change username for user");
  rename->add_option("TARGET_USER", rn->first, "name of user whose username should be changed")
      ->required();
  rename->add_option("NEW_USERNAME", rn->second, "new username for target_user")->required();
  rename->callback([&ctx, rn] {
    ctx.SetAction("rename user", [&ctx, rn] {
      return PatchUser(ctx.GetSession(), rn->first, {{"username", rn->second}});
    });
  });

  auto target = std::make_shared<std::string>();
  CLI::App* change = user->add_subcommand("change-password", "change password for user");
  change->add_option("TARGET_USER", *target, "name of user whose password should be changed");
  change->callback([&ctx, target] {
    ctx.SetAction("change password", [&ctx, target]() -> Status {
      Session& s = ctx.GetSession();
      std::string username = *target;
      if (username.empty()) {
        if (!ctx.user_flag.empty()) {
          username = ctx.user_flag;
        } else {
          DET_ASSIGN_OR_RETURN(username, s.WhoAmI());
        }
      }
      DET_ASSIGN_OR_RETURN(std::string password,
                           AskNewPassword("New password for user '" + username + "': "));
      DET_RETURN_IF_ERROR(PatchUser(
          s, username, {{"password", HashPasswordForLogin(password)}, {"isHashed", true}}));
      // Changing one's own password logs in again with it, as Determined's CLI.
      if (target->empty()) DET_RETURN_IF_ERROR(s.Login(username, password).status());
      return Status::Ok();
    });
  });

  struct EditArgs {
    std::string target;
    std::string display_name;
    std::string username;
    std::string remote;  // true|false
    std::string active;
    std::string admin;
  };
  auto ed = std::make_shared<EditArgs>();
  CLI::App* edit = user->add_subcommand("edit", "edit user fields");
  edit->add_option("TARGET_USER", ed->target, "name of user that should be edited")->required();
  edit->add_option("--display-name", ed->display_name, "new display name for target_user");
  edit->add_option("--username", ed->username, "new username for target_user");
  edit->add_option("--remote", ed->remote, "set user as remote (true|false)")->check(kTrueFalse);
  edit->add_option("--active", ed->active, "set user as active/inactive (true|false)")
      ->check(kTrueFalse);
  edit->add_option("--admin", ed->admin, "grant/remove user admin permissions (true|false)")
      ->check(kTrueFalse);
  edit->callback([&ctx, ed, edit] {
    ctx.SetAction("edit user", [&ctx, ed, edit]() -> Status {
      auto given = [edit](const char* name) { return edit->get_option(name)->count() > 0; };
      json patch = json::object();
      std::vector<std::string> changes;
      if (given("--display-name")) {
        patch["displayName"] = ed->display_name;
        changes.push_back("Display Name");
      }
      if (given("--remote")) {
        patch["remote"] = IsTrue(ed->remote);
        changes.push_back("Remote");
      }
      if (given("--active")) {
        patch["active"] = IsTrue(ed->active);
        changes.push_back("Active");
      }
      if (given("--username")) {
        patch["username"] = ed->username;
        changes.push_back("Username");
      }
      if (given("--admin")) {
        patch["admin"] = IsTrue(ed->admin);
        changes.push_back("Admin");
      }
      if (changes.empty()) {
        return InvalidArgument("No field provided. Use 'det user edit -h' for usage.");
      }
      DET_RETURN_IF_ERROR(PatchUser(ctx.GetSession(), ed->target, patch));
      std::string line = "Changes made to the following fields: ";
      for (size_t i = 0; i < changes.size(); ++i) line += (i ? ", " : "") + changes[i];
      Print(line + "\n");
      return Status::Ok();
    });
  });
}

}  // namespace det::cli
