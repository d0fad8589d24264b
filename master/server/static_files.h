#pragma once
// Static files of the web UI: the built single-page app the master serves under /det/.
// Pure path and header logic (SafeJoin, ContentTypeFor, CacheControlFor) plus one function that
// reads a file and answers it; the routes live in master/api/routes_webui.cc.

#include <optional>
#include <string>

#include "master/server/http_server.h"

namespace det::master::server {

// The URL prefix of the app, as Determined's: every page is /det/<route>.
inline constexpr const char* kWebUiPrefix = "/det";

// `root` joined with the URL path `relative` ("assets/index-1a2b.js"), or nullopt when the path
// could leave `root`: a ".." segment, a backslash, a NUL byte or a percent sign that survived
// decoding. Empty and "." segments are dropped, so "a//b/./c" is "a/b/c".
std::optional<std::string> SafeJoin(const std::string& root, const std::string& relative);

// The Content-Type for a file name by its extension; application/octet-stream when unknown.
std::string ContentTypeFor(const std::string& file_name);

// Vite names the files under assets/ by their content hash, so they never change: a year,
// immutable. Everything else (index.html, favicon) is revalidated on every load.
std::string CacheControlFor(const std::string& relative);

// The default web UI directory for a binary in <dir>/bin: <dir>/webui, else
// <dir>/share/determined/webui; "" when neither holds an index.html.
std::string WebUiDirNearExecutable();

// Answers GET <kWebUiPrefix>/<relative> from `root`: the file when it exists; index.html for any
// other path (the app routes on the client) except under assets/, where a missing file is 404
// (a stale page asking for an old bundle must not get HTML back as JavaScript). 404 with a
// readable message when the app is not built.
HttpResponse ServeWebUiFile(const std::string& root, const std::string& relative);

}  // namespace det::master::server
