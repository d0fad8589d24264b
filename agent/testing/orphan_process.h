#pragma once
// Test helpers: start a shell script as a new session/process group with a given environment,
// the way the agent's launcher does, but owned by nobody (as after a kill -9 of the agent).

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace det::agent::testing {

// Whether /proc/<pid>/environ holds the entry `entry` ("K=V").
inline bool EnvironHolds(pid_t pid, const std::string& entry) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string item;
  while (in && std::getline(in, item, '\0')) {
    if (item == entry) return true;
  }
  return false;
}

// Runs `/bin/sh -c script` in a new session with exactly `env` ("K=V"), stdio on /dev/null.
// Returns once the child runs with that environment (before its exec it still has ours).
inline pid_t SpawnSession(const std::string& script, const std::vector<std::string>& env) {
  std::vector<std::string> argv = {"/bin/sh", "-c", script};
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> env_copy = env;
  for (auto& e : env_copy) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!env.empty() && !EnvironHolds(pid, env.back()) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return pid;
}

// Alive and not a zombie.
inline bool IsLive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string stat = ss.str();
  size_t close_paren = stat.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < stat.size() &&
         stat[close_paren + 2] != 'Z' && stat[close_paren + 2] != 'X';
}

// Waits up to `timeout` for `path` to hold a pid (written by the spawned script).
inline pid_t ReadPidWhenWritten(const std::string& path,
                                std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    std::string line;
    if (in && std::getline(in, line) && !line.empty()) return static_cast<pid_t>(std::stol(line));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

// Waits (up to 10 s) for our child `pid` to end; its wait status, or -1 on timeout.
inline int WaitChildStatus(pid_t pid) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

// Waits (up to 10 s) until `pid` is no longer live; reaps it when it is our child.
inline bool WaitGone(pid_t pid) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    waitpid(pid, nullptr, WNOHANG);
    if (!IsLive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace det::agent::testing
