#pragma once
// The password protocol of Determined's login: the client sends
// sha512_hex("GubPEmmotfiK9TMD6Zdw" + password) with isHashed:true, except that the empty
// password is sent as "".

#include <string>
#include <string_view>

namespace det::cli {

inline constexpr std::string_view kPasswordSalt = "GubPEmmotfiK9TMD6Zdw";

// Lower-case hex SHA-512 of `data`.
std::string Sha512Hex(std::string_view data);

// What the client sends as `password` for `plain` ("" stays "").
std::string HashPasswordForLogin(std::string_view plain);

}  // namespace det::cli
