// det cmd (command) run/list/logs/kill, det notebook start/list/logs/kill/open, det shell
// start/open/list/kill (ssh through the master's /proxy/ tunnel), det tensorboard
// start/list/logs/kill/open, det task list/logs: Determined's tasks beside experiments.
#include <netdb.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/cli_context.h"
#include "cli/config_override.h"
#include "cli/context_packer.h"
#include "cli/table.h"
#include "cli/workspace_lookup.h"
#include "common/http_client.h"
#include "common/websocket.h"

namespace det::cli {
namespace {

using json = nlohmann::json;

struct Kind {
  const char* plural;  // API path segment and list key
  const char* singular;
  const char* title;  // "Command"
};
constexpr Kind kCommand{"commands", "command", "command"};
constexpr Kind kNotebook{"notebooks", "notebook", "notebook"};
constexpr Kind kShell{"shells", "shell", "shell"};
constexpr Kind kTensorboard{"tensorboards", "tensorboard", "tensorboard"};

struct LaunchArgs {
  std::string config_file;
  std::vector<std::string> config;  // K=V overrides
  std::string context;
  std::vector<std::string> include;
  std::string templ;
  std::string workspace;  // -w/--workspace-name: the workspace it is launched in
  std::vector<std::string> entrypoint;  // cmd run CMD...; shell start -- CMD
  bool detach = false;
  // notebook start: Determined's det opens a browser unless told not to; this one never opens
  // one (it prints the URL), so the flag changes nothing.
  bool no_browser = false;
  std::vector<int64_t> experiment_ids;  // tensorboard
  std::vector<int64_t> trial_ids;
};

Result<json> BuildConfig(const LaunchArgs& a) {
  std::string yaml = "{}";
  if (!a.config_file.empty()) {
    std::ifstream in(a.config_file, std::ios::binary);
    if (!in) return NotFound("cannot read the config file " + a.config_file);
    std::stringstream ss;
    ss << in.rdbuf();
    yaml = ss.str();
  }
  DET_ASSIGN_OR_RETURN(std::string applied, ApplyConfigOverrides(yaml, a.config));
  DET_ASSIGN_OR_RETURN(nlohmann::ordered_json parsed, YamlToJson(applied));
  json config = parsed.is_null() ? json::object() : json::parse(parsed.dump());
  if (!config.is_object()) return InvalidArgument("config: must be a mapping");
  return config;
}

Result<json> Launch(Session& session, const Kind& kind, const LaunchArgs& a, json config) {
  json body = {{"config", config}};
  if (!a.templ.empty()) body["templateName"] = a.templ;
  if (!a.workspace.empty()) {
    DET_ASSIGN_OR_RETURN(int64_t id, WorkspaceIdByName(session, a.workspace));
    body["workspaceId"] = id;
  }
  if (!a.context.empty() || !a.include.empty()) {
    DET_ASSIGN_OR_RETURN(PackedContext packed, PackContext(a.context, a.include));
    body["files"] = packed.files;
  }
  if (!a.experiment_ids.empty()) body["experimentIds"] = a.experiment_ids;
  if (!a.trial_ids.empty()) body["trialIds"] = a.trial_ids;
  DET_ASSIGN_OR_RETURN(json resp, session.Post(std::string("/api/v1/") + kind.plural, body));
  return resp.value(kind.singular, json::object());
}

// Prints each log line of the task; with `follow`, until the task ends.
Status PrintLogs(Session& session, const std::string& task_id, bool follow) {
  std::string path = "/api/v1/tasks/" + task_id + "/logs" + (follow ? "?follow=true" : "");
  return session.StreamResults(path, [](const json& r) {
    std::string line = r.value("log", "");
    if (!line.empty() && line.back() == '\n') line.pop_back();
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    return true;
  });
}

// Polls GET /api/v1/tasks/{id} until its service is ready; an error when the task ends first,
// with its last output lines (e.g. the missing package).
Status WaitReady(Session& session, const Kind& kind, const std::string& id) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(30);
  while (std::chrono::steady_clock::now() < deadline) {
    DET_ASSIGN_OR_RETURN(json resp, session.Get("/api/v1/tasks/" + id));
    const json& task = resp["task"];
    const json allocs = task.value("allocations", json::array());
    if (!allocs.empty() && allocs[0].value("isReady", false)) return Status::Ok();
    if (task.contains("endTime")) {
      std::string tail;
      (void)session.StreamResults("/api/v1/tasks/" + id + "/logs", [&tail](const json& r) {
        std::string l = r.value("log", "");
        if (r.value("stdtype", "") == "stderr") tail += l;
        return true;
      });
      if (!tail.empty() && tail.back() == '\n') tail.pop_back();
      return FailedPrecondition(std::string(kind.title) + " (id: " + id + ") ended before it " +
                                "was ready" + (tail.empty() ? "" : ": " + tail));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Unavailable(std::string(kind.title) + " " + id + " is not ready after 30 minutes");
}

Status List(CliContext& ctx, const Kind& kind, bool all, bool quiet) {
  Session& session = ctx.GetSession();
  std::string path = std::string("/api/v1/") + kind.plural;
  if (!all) {
    DET_ASSIGN_OR_RETURN(std::string user, session.Username());
    path += "?users=" + UrlEncode(user);
  }
  DET_ASSIGN_OR_RETURN(json resp, session.Get(path));
  std::vector<TableRow> rows;
  const json items = resp.value(kind.plural, json::array());
  for (const json& t : items) {
    if (quiet) {
      Print(t.value("id", "") + "\n");
      continue;
    }
    std::string state = t.value("state", "");
    if (state.rfind("STATE_", 0) == 0) state = state.substr(6);
    TableRow row = {t.value("id", ""),          t.value("username", ""),
                    t.value("description", ""), state,
                    t.value("exitStatus", ""),  t.value("resourcePool", "")};
    rows.push_back(std::move(row));
  }
  if (quiet) return Status::Ok();
  Print(
      RenderPresto({"Id", "Owner", "Description", "State", "Exit Status", "Resource Pool"}, rows) +
      "\n");
  return Status::Ok();
}

Status Kill(CliContext& ctx, const Kind& kind, const std::vector<std::string>& ids) {
  Session& session = ctx.GetSession();
  for (const std::string& id : ids) {
    DET_RETURN_IF_ERROR(
        session.Post(std::string("/api/v1/") + kind.plural + "/" + id + "/kill", json::object())
            .status());
    Print("Killed " + std::string(kind.title) + " " + id + "\n");
  }
  return Status::Ok();
}

// det cmd run: launch, stream the output, exit with the command's exit code.
Status RunCommand(CliContext& ctx, const LaunchArgs& a) {
  Session& session = ctx.GetSession();
  DET_ASSIGN_OR_RETURN(json config, BuildConfig(a));
  if (!config.contains("entrypoint") && !a.entrypoint.empty()) config["entrypoint"] = a.entrypoint;
  DET_ASSIGN_OR_RETURN(json cmd, Launch(session, kCommand, a, config));
  std::string id = cmd.value("id", "");
  if (a.detach) {
    Print(id + "\n");
    return Status::Ok();
  }
  Print("Launched command (id: " + id + ", name: " + cmd.value("description", "") + ").\n");
  std::fflush(stdout);
  DET_RETURN_IF_ERROR(PrintLogs(session, id, true));
  // The exit code is final once the task is terminated (the log stream ends then).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (true) {
    DET_ASSIGN_OR_RETURN(json resp, session.Get("/api/v1/commands/" + id));
    const json& c = resp["command"];
    if (c.value("state", "") == "STATE_TERMINATED") {
      std::fflush(stdout);
      int code = c.contains("exitCode") ? c["exitCode"].get<int>() : 1;
      std::exit(code > 255 || code < 0 ? 1 : code);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Unavailable("command " + id + " did not end after its log stream did");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::string NotebookUrl(Session& session, const json& nb) {
  return session.master_url() + "/proxy/" + nb.value("id", "") + "/?token=" + nb.value("token", "");
}

Status StartNotebook(CliContext& ctx, const LaunchArgs& a) {
  Session& session = ctx.GetSession();
  DET_ASSIGN_OR_RETURN(json config, BuildConfig(a));
  DET_ASSIGN_OR_RETURN(json nb, Launch(session, kNotebook, a, config));
  std::string id = nb.value("id", "");
  if (a.detach) {
    Print(id + "\n");
    return Status::Ok();
  }
  Print("Launched notebook (id: " + id + ", name: " + nb.value("description", "") + ").\n");
  std::fflush(stdout);
  DET_RETURN_IF_ERROR(WaitReady(session, kNotebook, id));
  Print("notebook (id: " + id + ") is ready.\n" + NotebookUrl(session, nb) + "\n");
  return Status::Ok();
}

Status OpenNotebook(CliContext& ctx, const std::string& id) {
  Session& session = ctx.GetSession();
  DET_ASSIGN_OR_RETURN(json resp, session.Get("/api/v1/notebooks/" + id));
  Print(NotebookUrl(session, resp["notebook"]) + "\n");
  return Status::Ok();
}

// det shell tunnel ID (ssh's ProxyCommand): a WebSocket to /proxy/ID/ on the master, as
// Determined's `python -m determined.cli.tunnel` opens it; ssh's bytes go in binary frames.
// The user's token goes along when there is one (the master then checks the owner rule);
// without one the shell's key alone admits.
Status Tunnel(CliContext& ctx, const std::string& id) {
  Session& session = ctx.GetSession();
  std::optional<std::string> token;
  if (const char* env = std::getenv("DET_USER_TOKEN"); env != nullptr && *env != '\0') {
    token = env;
  } else if (Result<std::string> user = session.Username(); user.ok()) {
    token = session.cache().Token(session.master_url(), *user);
  }
  std::string url = session.master_url();
  if (url.rfind("http://", 0) != 0) {
    return Unimplemented("det shell: the tunnel supports http:// masters (got " + url + ")");
  }
  std::string hostport = url.substr(7);
  hostport = hostport.substr(0, hostport.find('/'));
  size_t colon = hostport.rfind(':');
  std::string host = colon == std::string::npos ? hostport : hostport.substr(0, colon);
  std::string port = colon == std::string::npos ? "80" : hostport.substr(colon + 1);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) {
    return Unavailable("cannot resolve " + hostport);
  }
  int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
  if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
    freeaddrinfo(res);
    return Unavailable("cannot connect to " + hostport);
  }
  freeaddrinfo(res);
  std::string key = websocket::NewClientKey();
  std::string req = "GET /proxy/" + id + "/ HTTP/1.1\r\nHost: " + hostport +
                    "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
                    "\r\nSec-WebSocket-Version: 13\r\n";
  if (token) req += "Authorization: Bearer " + *token + "\r\n";
  req += "\r\n";
  if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return Unavailable("cannot send to " + hostport);
  }
  // The answer's head, a byte at a time, so that no frame byte is read past it.
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos && recv(fd, &c, 1, 0) == 1) head += c;
  std::string lower = head;
  for (auto& ch : lower) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
  if (head.rfind("HTTP/1.1 101", 0) != 0) {
    std::string rest;
    char buf[4096];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) rest.append(buf, n);
    close(fd);
    return Unavailable("the master refused the tunnel to " + id + ": " +
                       head.substr(0, head.find("\r\n")) + " " + rest);
  }
  std::string accept = "sec-websocket-accept: " + websocket::AcceptKey(key);
  for (auto& ch : accept) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
  if (lower.find(accept) == std::string::npos) {
    close(fd);
    return Unavailable("the master's answer to the tunnel to " + id +
                       " has no matching Sec-WebSocket-Accept");
  }
  Status st = websocket::Pump(fd, /*in_fd=*/0, /*out_fd=*/1, /*client=*/true, "");
  close(fd);
  return st;
}

// ssh to the shell's sshd through the master, with the shell's private key.
Status OpenShell(CliContext& ctx, const std::string& id, const std::vector<std::string>& cmd) {
  Session& session = ctx.GetSession();
  DET_RETURN_IF_ERROR(WaitReady(session, kShell, id));
  DET_ASSIGN_OR_RETURN(json resp, session.Get("/api/v1/shells/" + id));
  const json& shell = resp["shell"];
  std::string user = shell.value("agentUserGroup", json::object()).value("user", "root");
  std::string dir = (std::filesystem::temp_directory_path() / ("det-shell-" + id)).string();
  std::filesystem::create_directories(dir);
  std::string key = dir + "/key";
  {
    std::ofstream out(key, std::ios::binary | std::ios::trunc);
    out << shell.value("privateKey", "");
  }
  std::filesystem::permissions(
      key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string proxy = self + " -m " + session.master_url() + " shell tunnel " + id;
  if (!ctx.user_flag.empty())
    proxy = self + " -u " + ctx.user_flag + " -m " + session.master_url() + " shell tunnel " + id;
  std::vector<std::string> argv = {"ssh",
                                   "-o",
                                   "ProxyCommand=" + proxy,
                                   "-o",
                                   "StrictHostKeyChecking=no",
                                   "-o",
                                   "UserKnownHostsFile=/dev/null",
                                   "-o",
                                   "LogLevel=ERROR",
                                   "-o",
                                   "IdentitiesOnly=yes",
                                   "-i",
                                   key};
  if (cmd.empty() && isatty(0)) argv.push_back("-tt");
  argv.push_back(user + "@" + id);
  for (const auto& c : cmd) argv.push_back(c);
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> cargv;
    for (auto& s : argv) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    execvp("ssh", cargv.data());
    std::perror("ssh (package openssh-client)");
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (cmd.empty()) Print("To reconnect, run: det shell open " + id + "\n");
  if (code != 0) std::exit(code);
  return Status::Ok();
}

Status StartShell(CliContext& ctx, const LaunchArgs& a) {
  Session& session = ctx.GetSession();
  DET_ASSIGN_OR_RETURN(json config, BuildConfig(a));
  DET_ASSIGN_OR_RETURN(json shell, Launch(session, kShell, a, config));
  std::string id = shell.value("id", "");
  if (a.detach) {
    Print(id + "\n");
    return Status::Ok();
  }
  Print("Launched shell (id: " + id + ", name: " + shell.value("description", "") + ").\n");
  return OpenShell(ctx, id, a.entrypoint);
}

Status StartTensorboard(CliContext& ctx, const LaunchArgs& a) {
  if (a.experiment_ids.empty() && a.trial_ids.empty()) {
    return InvalidArgument("give experiment ids or --trial-ids");
  }
  Session& session = ctx.GetSession();
  DET_ASSIGN_OR_RETURN(json config, BuildConfig(a));
  DET_ASSIGN_OR_RETURN(json tb, Launch(session, kTensorboard, a, config));
  std::string id = tb.value("id", "");
  if (a.detach) {
    Print(id + "\n");
    return Status::Ok();
  }
  Print("Launched tensorboard (id: " + id + ", name: " + tb.value("description", "") + ").\n");
  std::fflush(stdout);
  DET_RETURN_IF_ERROR(WaitReady(session, kTensorboard, id));
  Print("tensorboard (id: " + id + ") is ready.\n" + session.master_url() + "/proxy/" + id + "/\n");
  return Status::Ok();
}

void AddLaunchFlags(CLI::App* cmd, LaunchArgs& a) {
  cmd->add_option("--config-file", a.config_file, "command config file (.yaml)");
  // One value per flag, as argparse: `--config a=b echo hi` leaves `echo hi` to the command.
  cmd->add_option("--config", a.config, "config overrides, e.g. resources.slots=2")
      ->allow_extra_args(false);
  cmd->add_option("-c,--context", a.context, "context directory uploaded with the task");
  cmd->add_option("-i,--include", a.include, "extra files or directories for the context")
      ->allow_extra_args(false);
  cmd->add_option("--template", a.templ, "config template to merge under the config");
  cmd->add_option("-w,--workspace-name", a.workspace, "workspace to launch it in");
  cmd->add_flag("-d,--detach", a.detach, "print the id and return");
}

void AddCommonSubcommands(CLI::App* group, CliContext& ctx, const Kind& kind) {
  auto list_all = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  CLI::App* list = group->add_subcommand("list", std::string("list ") + kind.plural);
  list->alias("ls");
  list->add_flag("-a,--all", *list_all, "every user's");
  list->add_flag("-q,--quiet", *quiet, "only the ids");
  list->callback([&ctx, kind, list_all, quiet] {
    ctx.SetAction(std::string("list ") + kind.plural,
                  [&ctx, kind, list_all, quiet] { return List(ctx, kind, *list_all, *quiet); });
  });
  auto ids = std::make_shared<std::vector<std::string>>();
  CLI::App* kill = group->add_subcommand("kill", std::string("kill ") + kind.plural);
  kill->add_option("ids", *ids, "ids")->required();
  kill->callback([&ctx, kind, ids] {
    ctx.SetAction(std::string("kill ") + kind.singular,
                  [&ctx, kind, ids] { return Kill(ctx, kind, *ids); });
  });
  auto log_id = std::make_shared<std::string>();
  auto follow = std::make_shared<bool>(false);
  CLI::App* logs =
      group->add_subcommand("logs", std::string("show a ") + kind.singular + "'s logs");
  logs->add_option("id", *log_id, "id")->required();
  logs->add_flag("-f,--follow", *follow, "follow until it ends");
  logs->callback([&ctx, log_id, follow] {
    ctx.SetAction("show logs",
                  [&ctx, log_id, follow] { return PrintLogs(ctx.GetSession(), *log_id, *follow); });
  });
}

}  // namespace

void RegisterNtscCommands(CLI::App& app, CliContext& ctx) {
  // det cmd / command
  CLI::App* cmd = app.add_subcommand("command", "manage commands");
  cmd->alias("cmd");
  cmd->require_subcommand(1);
  auto run_args = std::make_shared<LaunchArgs>();
  CLI::App* run = cmd->add_subcommand("run", "run a command on the cluster");
  AddLaunchFlags(run, *run_args);
  // CMD... : everything from the first positional on (its own flags included), as Determined's
  // argparse REMAINDER.
  run->prefix_command();
  run->callback([&ctx, run_args, run] {
    // prefix_command: everything after the flags is the command, as Determined's argparse.
    for (const std::string& rest : run->remaining()) run_args->entrypoint.push_back(rest);
    ctx.SetAction("run command", [&ctx, run_args] { return RunCommand(ctx, *run_args); });
  });
  AddCommonSubcommands(cmd, ctx, kCommand);

  // det notebook
  CLI::App* nb = app.add_subcommand("notebook", "manage notebooks");
  nb->require_subcommand(1);
  auto nb_args = std::make_shared<LaunchArgs>();
  CLI::App* nb_start = nb->add_subcommand("start", "start a Jupyter notebook");
  AddLaunchFlags(nb_start, *nb_args);
  nb_start->add_flag("--no-browser", nb_args->no_browser,
                     "don't open the notebook in a browser (none is opened: the URL is printed)");
  nb_start->callback([&ctx, nb_args] {
    ctx.SetAction("start notebook", [&ctx, nb_args] { return StartNotebook(ctx, *nb_args); });
  });
  auto nb_open_id = std::make_shared<std::string>();
  CLI::App* nb_open = nb->add_subcommand("open", "print a notebook's URL");
  nb_open->add_option("id", *nb_open_id, "notebook id")->required();
  nb_open->callback([&ctx, nb_open_id] {
    ctx.SetAction("open notebook", [&ctx, nb_open_id] { return OpenNotebook(ctx, *nb_open_id); });
  });
  AddCommonSubcommands(nb, ctx, kNotebook);

  // det shell
  CLI::App* sh = app.add_subcommand("shell", "manage shells");
  sh->require_subcommand(1);
  auto sh_args = std::make_shared<LaunchArgs>();
  CLI::App* sh_start = sh->add_subcommand("start", "start a shell and connect to it");
  AddLaunchFlags(sh_start, *sh_args);
  sh_start->add_option("cmd", sh_args->entrypoint, "a command to run in the shell (after --)");
  sh_start->callback([&ctx, sh_args] {
    ctx.SetAction("start shell", [&ctx, sh_args] { return StartShell(ctx, *sh_args); });
  });
  auto sh_open_id = std::make_shared<std::string>();
  auto sh_open_cmd = std::make_shared<std::vector<std::string>>();
  CLI::App* sh_open = sh->add_subcommand("open", "connect to a running shell");
  sh_open->add_option("id", *sh_open_id, "shell id")->required();
  sh_open->add_option("cmd", *sh_open_cmd, "a command to run (after --)");
  sh_open->callback([&ctx, sh_open_id, sh_open_cmd] {
    ctx.SetAction("open shell", [&ctx, sh_open_id, sh_open_cmd] {
      return OpenShell(ctx, *sh_open_id, *sh_open_cmd);
    });
  });
  auto tunnel_id = std::make_shared<std::string>();
  CLI::App* tunnel = sh->add_subcommand("tunnel", "");  // hidden: ssh's ProxyCommand
  tunnel->add_option("id", *tunnel_id, "shell id")->required();
  tunnel->callback([&ctx, tunnel_id] {
    ctx.SetAction("tunnel to shell", [&ctx, tunnel_id] { return Tunnel(ctx, *tunnel_id); });
  });
  AddCommonSubcommands(sh, ctx, kShell);

  // det tensorboard
  CLI::App* tb = app.add_subcommand("tensorboard", "manage TensorBoards");
  tb->require_subcommand(1);
  auto tb_args = std::make_shared<LaunchArgs>();
  CLI::App* tb_start = tb->add_subcommand("start", "start a TensorBoard");
  AddLaunchFlags(tb_start, *tb_args);
  tb_start->add_option("experiment_ids", tb_args->experiment_ids, "experiment ids");
  tb_start->add_option("-t,--trial-ids", tb_args->trial_ids, "trial ids");
  tb_start->callback([&ctx, tb_args] {
    ctx.SetAction("start tensorboard", [&ctx, tb_args] { return StartTensorboard(ctx, *tb_args); });
  });
  AddCommonSubcommands(tb, ctx, kTensorboard);

  // det task list / logs
  CLI::App* task = app.add_subcommand("task", "manage tasks");
  task->require_subcommand(1);
  CLI::App* task_list = task->add_subcommand("list", "list live tasks (allocations)");
  task_list->alias("ls");
  task_list->callback([&ctx] {
    ctx.SetAction("list tasks", [&ctx]() -> Status {
      DET_ASSIGN_OR_RETURN(json resp, ctx.GetSession().Get("/api/v1/tasks"));
      std::vector<TableRow> rows;
      const json summaries = resp.value("allocationIdToSummary", json::object());
      for (const auto& [aid, s] : summaries.items()) {
        rows.push_back({s.value("taskId", ""), aid, s.value("name", ""),
                        std::to_string(s.value("slotsNeeded", 0)), s.value("registeredTime", ""),
                        s.value("state", ""), s.value("resourcePool", "")});
      }
      Print(RenderPresto({"Task ID", "Allocation ID", "Name", "Slots Needed", "Registered Time",
                          "State", "Resource Pool"},
                         rows) +
            "\n");
      return Status::Ok();
    });
  });
  auto task_log_id = std::make_shared<std::string>();
  auto task_follow = std::make_shared<bool>(false);
  CLI::App* task_logs = task->add_subcommand("logs", "show a task's logs");
  task_logs->add_option("task_id", *task_log_id, "task id")->required();
  task_logs->add_flag("-f,--follow", *task_follow, "follow until it ends");
  task_logs->callback([&ctx, task_log_id, task_follow] {
    ctx.SetAction("show task logs", [&ctx, task_log_id, task_follow] {
      return PrintLogs(ctx.GetSession(), *task_log_id, *task_follow);
    });
  });
}

}  // namespace det::cli
