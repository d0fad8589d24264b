// SqliteStore: sessions for the authz work (the expiry of a live session).
#include "master/store/session_token.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {

Result<std::pair<int64_t, int64_t>> SqliteStore::LookupSessionExpiry(const std::string& token,
                                                                     int64_t now) {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT user_id, expiry FROM user_sessions WHERE token = ? AND revoked = 0 AND "
                 "expiry > ?");
  s.Bind(1, SessionTokenDigest(token)).Bind(2, now);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Unauthenticated("invalid credentials");
  return std::make_pair(s.Int(0), s.Int(1));
}

}  // namespace det::master::store
