#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli/auth_cache.h"
#include "cli/cli_context.h"
#include "cli/master_url.h"
#include "common/http_client.h"

namespace det::cli {

std::string CliContext::MasterUrl() const {
  return ResolveMasterUrlFromEnv(master_flag.empty() ? std::nullopt
                                                     : std::optional<std::string>(master_flag));
}

Session& CliContext::GetSession() {
  if (!session_) {
    std::optional<std::string> user;
    if (!user_flag.empty()) user = user_flag;
    session_ = std::make_unique<Session>(MasterUrl(), user, AuthEnv::FromEnvironment(),
                                         DefaultAuthCachePath());
  }
  return *session_;
}

namespace {
CLI::Validator IntAtLeast(long long min, const std::string& what) {
  return CLI::Validator(
      [min, what](std::string& value) -> std::string {
        char* end = nullptr;
        errno = 0;
        long long n = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || errno != 0 || n < min) {
          return "must be " + what + ", not '" + value + "'";
        }
        return "";
      },
      "INT");
}
}  // namespace

CLI::Validator PositiveInt() { return IntAtLeast(1, "a positive integer"); }
CLI::Validator NonNegativeInt() { return IntAtLeast(0, "a non-negative integer"); }

void Print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

int RunCli(int argc, char** argv) {
  CliContext ctx;
  CLI::App app{"det: the command-line client of the Determined training platform", "det"};
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default(false);
  app.add_option("-m,--master", ctx.master_flag,
                 "master address (default: $DET_MASTER, else $DET_MASTER_ADDR, else "
                 "http://127.0.0.1:8080)");
  app.add_option("-u,--user", ctx.user_flag, "run as this user (default: $DET_USER, else the "
                                             "logged-in user, else 'determined')");
  std::string cert_file, cert_name;
  app.add_option("--cert-file", cert_file,
                 "CA file that verifies the master's TLS certificate, or 'noverify' (default: "
                 "$DET_MASTER_CERT_FILE)");
  app.add_option("--cert-name", cert_name,
                 "the name in the master's certificate when it is not the URL's host (default: "
                 "$DET_MASTER_CERT_NAME)");
  app.set_version_flag("-v,--version", "det 0.38.1");

  RegisterUserCommands(app, ctx);
  RegisterMasterCommands(app, ctx);
  RegisterExperimentCommands(app, ctx);
  RegisterTrialCommands(app, ctx);
  RegisterDeployCommands(app, ctx);
  RegisterPreviewCommands(app, ctx);
  RegisterCheckpointCommands(app, ctx);
  RegisterJobCommands(app, ctx);
  RegisterModelCommands(app, ctx);
  RegisterTemplateCommands(app, ctx);
  RegisterWebhookCommands(app, ctx);
  RegisterResourcePoolCommands(app, ctx);
  RegisterNtscCommands(app, ctx);
  RegisterUserAdminCommands(app.get_subcommand("user"), ctx);
  RegisterWorkspaceProjectCommands(app, ctx);
  RegisterExperimentParityCommands(app.get_subcommand("experiment"), ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "det: error: " << e.what() << "\n"
              << "Run 'det --help' (or 'det <command> --help') for usage.\n";
    return 2;
  }
  if (!ctx.action()) {
    std::cerr << "det: error: a command is required\n";
    return 2;
  }
  // Explicit flags win over the environment, as in Determined's CLI. Exported so that what
  // det starts (deploy local's agents, the checkpoint download helper) verifies the same way.
  if (!cert_file.empty()) setenv("DET_MASTER_CERT_FILE", cert_file.c_str(), 1);
  if (!cert_name.empty()) setenv("DET_MASTER_CERT_NAME", cert_name.c_str(), 1);
  HttpClient::SetDefaultTls(TlsOptionsFromEnvironment());
  Status status;
  try {
    status = ctx.action()();
  } catch (const std::exception& e) {
    status = Internal(e.what());
  }
  if (!status.ok()) {
    std::fflush(stdout);
    std::cerr << "Failed to " << ctx.what() << ": " << status.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace det::cli
