// The web UI: the single-page app under /det/ and the redirect of / to it.
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/server/static_files.h"

namespace det::master::api {

using server::HttpRequest;
using server::HttpResponse;

namespace {

HttpResponse Redirect(const std::string& location) {
  HttpResponse r;
  r.status = 302;
  r.content_type = "text/plain; charset=utf-8";
  r.body = "see " + location + "\n";
  r.headers.emplace_back("Location", location);
  return r;
}

}  // namespace

void RegisterWebUiRoutes(server::Router* router, server::Master* master) {
  const std::string prefix = server::kWebUiPrefix;
  router->Add("GET", "/", NoAuth([prefix](HttpRequest&) { return Redirect(prefix + "/"); }));
  // The files need no login: the app itself asks for one (the API routes check the token).
  router->AddPrefix("GET", prefix, NoAuth([master, prefix](HttpRequest& req) {
    if (req.path == prefix) return Redirect(prefix + "/");
    return server::ServeWebUiFile(master->config().webui_dir, req.path.substr(prefix.size() + 1));
  }));
}

}  // namespace det::master::api
