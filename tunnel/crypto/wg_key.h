// WireGuard's key format: the base64 encoding of 32 bytes, 44 characters
// ending in '=' (what `wg genkey`, `wg pubkey` and `wg genpsk` print). Private
// keys, public keys and pre-shared keys all look alike.
//
// Encoding and decoding avoid secret-dependent branches and table lookups
// (private keys pass through here), as wireguard-tools' encoding.c does.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "tunnel/crypto/keys.h"

namespace egw::tunnel::crypto {

// Exactly 44 characters of canonical base64 of 32 bytes (the last '=', the
// unused low bits of the 43rd character zero), after trimming surrounding
// whitespace (spaces, tabs, CR, LF). nullopt otherwise.
std::optional<Key32> parse_wg_key(std::string_view base64);

// The 44-character base64 form.
std::string format_wg_key(const Key32& key);

// Reads a key file (one key, as `wg genkey > file` writes it). On error, a
// message naming the file and what is wrong: missing, unreadable, not a key.
// The file's permissions are not checked by this overload.
std::variant<Key32, std::string> read_wg_key_file(const std::string& path);

// The same, and for private keys and pre-shared keys: `warning` is set (and
// the key still returned) when the file is readable or writable by group or
// others, e.g. "key.priv: group/world-accessible (mode 0644); a private key
// should be 0600". Left empty otherwise.
std::variant<Key32, std::string> read_wg_key_file(const std::string& path, std::string& warning);

}  // namespace egw::tunnel::crypto
