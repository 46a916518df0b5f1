// PLACEHOLDER until the nft branch lands (same API).
#pragma once
#include <optional>
#include <string>
#include "tunnel/frames.h"
namespace egw::proxy {
std::optional<tunnel::Destination> original_destination(int fd, std::string* error = nullptr);
bool is_listener_itself(const tunnel::Destination& d, int listener_fd);
}  // namespace egw::proxy
