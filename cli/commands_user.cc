// det user login / logout / whoami.
#include <termios.h>
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/cli_context.h"

namespace det::cli {

std::string ReadPassword(const std::string& prompt) {
  bool tty = isatty(STDIN_FILENO) != 0;
  std::cerr << prompt << std::flush;
  struct termios old_term;
  bool restore = false;
  if (tty && tcgetattr(STDIN_FILENO, &old_term) == 0) {
    struct termios no_echo = old_term;
    no_echo.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    restore = tcsetattr(STDIN_FILENO, TCSAFLUSH, &no_echo) == 0;
  }
  std::string line;
  std::getline(std::cin, line);
  if (restore) {
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &old_term);
    std::cerr << "\n";
  } else if (!tty) {
    std::cerr << "\n";
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

void RegisterUserCommands(CLI::App& app, CliContext& ctx) {
  CLI::App* user = app.add_subcommand("user", "manage users and log in")->alias("u");
  user->require_subcommand(1);

  auto login_user = std::make_shared<std::string>();
  CLI::App* login = user->add_subcommand("login", "log in as a user");
  login->add_option("USERNAME", *login_user, "the user (prompted for when left out)");
  login->callback([&ctx, login_user] {
    ctx.SetAction("log in", [&ctx, login_user]() -> Status {
      std::string username = *login_user;
      if (username.empty()) {
        std::cerr << "Username: " << std::flush;
        std::getline(std::cin, username);
        while (!username.empty() && (username.back() == '\r' || username.back() == ' ')) {
          username.pop_back();
        }
        if (username.empty()) return InvalidArgument("a username is required");
      }
      std::string password = ReadPassword("Password for user '" + username + "': ");
      Result<nlohmann::json> user_obj = ctx.GetSession().Login(username, password);
      if (!user_obj.ok()) return user_obj.status();
      return Status::Ok();
    });
  });

  CLI::App* logout = user->add_subcommand("logout", "log out the current user");
  auto logout_all = std::make_shared<bool>(false);
  logout->add_flag("--all,-a", *logout_all,
                   "log out every user with a cached token for this master");
  logout->callback([&ctx, logout_all] {
    ctx.SetAction("log out", [&ctx, logout_all]() -> Status {
      if (*logout_all) return ctx.GetSession().LogoutAll();
      Result<std::string> user_name = ctx.GetSession().Logout();
      return user_name.status();
    });
  });

  CLI::App* whoami = user->add_subcommand("whoami", "print the logged-in user");
  whoami->callback([&ctx] {
    ctx.SetAction("get the current user", [&ctx]() -> Status {
      DET_ASSIGN_OR_RETURN(std::string name, ctx.GetSession().WhoAmI());
      Print("You are logged in as user '" + name + "'\n");
      return Status::Ok();
    });
  });
}

}  // namespace det::cli
