// The REST contract (api/openapi.yaml) names exactly the routes the master registers: every
// {method, pattern} of RegisterRoutes is an operation of the document, and every operation of
// the document is a registered route. Also checks that every "$ref" of the document resolves.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "common/clock.h"
#include "common/test_dir.h"
#include "master/api/routes.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::api {
namespace {

using RouteSet = std::set<std::pair<std::string, std::string>>;

const char* const kMethods[] = {"get", "put", "post", "delete", "patch", "head", "options"};

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

YAML::Node LoadContract() { return YAML::LoadFile(DET_OPENAPI_PATH); }

// The routes of a Master over a fresh SQLite store, as main.cc registers them (the Master is
// not started: registration only looks up its services).
RouteSet RegisteredRoutes() {
  std::filesystem::path dir = det::testing::FreshTestDir("det-routes-contract-");
  RouteSet out;
  {
    auto store = store::SqliteStore::Open((dir / "determined.db").string());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return out;
    server::MasterConfig config;
    config.data_dir = dir.string();
    EXPECT_TRUE(server::FinalizeMasterConfig(&config).ok());
    FakeClock clock;
    server::Master master(config, std::move(store).value(), &clock);
    server::Router router;
    RegisterRoutes(&router, &master);
    for (auto& r : router.Routes()) out.insert(std::move(r));
  }
  std::filesystem::remove_all(dir);
  return out;
}

RouteSet DocumentedRoutes(const YAML::Node& doc) {
  RouteSet out;
  for (const auto& path : doc["paths"]) {
    for (const char* m : kMethods) {
      if (path.second[m]) out.emplace(Upper(m), path.first.as<std::string>());
    }
  }
  return out;
}

std::string Describe(const RouteSet& routes) {
  std::string s;
  for (const auto& [m, p] : routes) s += "  " + m + " " + p + "\n";
  return s;
}

TEST(RoutesContractTest, EveryRegisteredRouteIsDocumented) {
  RouteSet documented = DocumentedRoutes(LoadContract());
  RouteSet missing;
  for (const auto& r : RegisteredRoutes()) {
    if (!documented.count(r)) missing.insert(r);
  }
  EXPECT_TRUE(missing.empty()) << "routes registered in master/api/routes*.cc but absent from "
                                  "api/openapi.yaml:\n"
                               << Describe(missing);
}

TEST(RoutesContractTest, EveryDocumentedRouteIsRegistered) {
  RouteSet registered = RegisteredRoutes();
  RouteSet extra;
  for (const auto& r : DocumentedRoutes(LoadContract())) {
    if (!registered.count(r)) extra.insert(r);
  }
  EXPECT_TRUE(extra.empty()) << "operations of api/openapi.yaml that the master does not "
                                "register:\n"
                             << Describe(extra);
}

TEST(RoutesContractTest, RouteListIsNotEmpty) {
  // Guards the two tests above against an empty registration or document.
  EXPECT_GT(RegisteredRoutes().size(), 50u);
  EXPECT_GT(DocumentedRoutes(LoadContract()).size(), 50u);
}

// Walks the document and collects every "$ref" value.
void CollectRefs(const YAML::Node& node, const std::string& where, std::set<std::string>* refs,
                 std::set<std::string>* places) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      std::string key = kv.first.as<std::string>();
      if (key == "$ref" && kv.second.IsScalar()) {
        refs->insert(kv.second.as<std::string>());
        places->insert(kv.second.as<std::string>() + " (at " + where + ")");
      } else {
        CollectRefs(kv.second, where + "/" + key, refs, places);
      }
    }
  } else if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      CollectRefs(node[i], where + "/" + std::to_string(i), refs, places);
    }
  }
}

TEST(RoutesContractTest, EveryRefResolves) {
  YAML::Node doc = LoadContract();
  std::set<std::string> refs, places;
  CollectRefs(doc, "", &refs, &places);
  ASSERT_FALSE(refs.empty());
  // Every reference is local: "#/components/<kind>/<name>".
  const std::string prefix = "#/components/";
  std::string broken;
  for (const std::string& place : places) {
    std::string ref = place.substr(0, place.find(' '));
    bool ok = false;
    if (ref.rfind(prefix, 0) == 0) {
      std::string rest = ref.substr(prefix.size());
      size_t slash = rest.find('/');
      ok = slash != std::string::npos &&
           doc["components"][rest.substr(0, slash)][rest.substr(slash + 1)].IsDefined();
    }
    if (!ok) broken += "  " + place + "\n";
  }
  EXPECT_TRUE(broken.empty()) << "unresolved $ref in api/openapi.yaml:\n" << broken;
}

// A parameter object, following a "$ref" into components/parameters.
YAML::Node Deref(const YAML::Node& doc, const YAML::Node& node) {
  if (!node["$ref"]) return node;
  std::string ref = node["$ref"].as<std::string>();
  const std::string prefix = "#/components/parameters/";
  if (ref.rfind(prefix, 0) != 0) return YAML::Node();
  return doc["components"]["parameters"][ref.substr(prefix.size())];
}

// Every operation: a unique operationId, a declared path parameter for each {name} of its path,
// and an answer for success (a 2xx/3xx status or default).
TEST(RoutesContractTest, EveryOperationIsComplete) {
  YAML::Node doc = LoadContract();
  std::set<std::string> ids;
  std::string problems;
  for (const auto& path : doc["paths"]) {
    std::string pattern = path.first.as<std::string>();
    for (const char* m : kMethods) {
      YAML::Node op = path.second[m];
      if (!op) continue;
      std::string where = Upper(m) + " " + pattern;
      if (!op["operationId"]) {
        problems += "  " + where + ": no operationId\n";
      } else if (!ids.insert(op["operationId"].as<std::string>()).second) {
        problems +=
            "  " + where + ": operationId " + op["operationId"].as<std::string>() + " used twice\n";
      }
      std::set<std::string> declared;
      for (const YAML::Node& params : {path.second["parameters"], op["parameters"]}) {
        if (!params) continue;
        for (const auto& p : params) {
          YAML::Node param = Deref(doc, p);
          if (param && param["in"] && param["in"].as<std::string>() == "path") {
            declared.insert(param["name"].as<std::string>());
          }
        }
      }
      for (size_t open = pattern.find('{'); open != std::string::npos;
           open = pattern.find('{', open + 1)) {
        std::string name = pattern.substr(open + 1, pattern.find('}', open) - open - 1);
        if (!declared.count(name))
          problems += "  " + where + ": path parameter {" + name + "} is not declared\n";
      }
      bool answers = false;
      if (op["responses"]) {
        for (const auto& r : op["responses"]) {
          std::string code = r.first.as<std::string>();
          answers = answers || code == "default" || code[0] == '2' || code[0] == '3';
        }
      }
      if (!answers) problems += "  " + where + ": no success response\n";
    }
  }
  EXPECT_TRUE(problems.empty()) << "incomplete operations in api/openapi.yaml:\n" << problems;
}

}  // namespace
}  // namespace det::master::api
